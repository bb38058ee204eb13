"""``autograd.grad(..., is_grads_batched=True)``: one backward pass on batched cotangents (nodes
whose backward cannot take them run per entry), against PyTorch's and against one pass per entry."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.func import _batched_backward

RNG = np.random.default_rng(7)
X = RNG.normal(size=(2, 3, 4))
W = RNG.normal(size=(5, 4))
B = RNG.normal(size=5)
IMG = RNG.normal(size=(2, 2, 5, 5))
KER = RNG.normal(size=(3, 2, 3, 3))
IDX = np.array([2, 0, 2])


def _mlp(lib, x, w, b):
    F = lib.nn.functional
    h = F.gelu(F.linear(x, w, b)).tanh()
    return F.log_softmax(h, -1) + h.sigmoid().mean(-1, keepdim=True)


CASES = {
    "mlp": (_mlp, lambda lib: [lib.tensor(X), lib.tensor(W), lib.tensor(B)]),
    "reductions": (
        lambda lib, x: lib.stack([x.sum(), x.amax(), x.prod(), x.norm(), x.var()]) * x.logsumexp(-1).mean(),
        lambda lib: [lib.tensor(X)],
    ),
    "shapes_and_indexing": (
        lambda lib, x: (
            lib.cat([x.permute(2, 0, 1).reshape(4, 6), x[..., lib.tensor(IDX)].reshape(3, 6)]).cumsum(0)
            / (x.abs() + 1).pow(1.5).sum()
        ),
        lambda lib: [lib.tensor(X)],
    ),
    "conv_pool_norm_layers": (
        lambda lib, x, k, w: lib.nn.functional.avg_pool2d(
            lib.nn.functional.batch_norm(
                lib.nn.functional.max_pool2d(
                    lib.nn.functional.layer_norm(lib.nn.functional.conv2d(x, k, w[:3], padding=1), (5, 5)),
                    2,
                    stride=1,
                ),
                lib.tensor(B[:3] / 2),
                lib.tensor(B[2:] ** 2),
                w[:3],
                w[2:],
            ),
            3,
            stride=2,
            padding=1,
            count_include_pad=False,
        ),
        lambda lib: [
            lib.tensor(IMG),
            lib.tensor(KER),
            lib.tensor(B),
        ],
    ),
    "unbatched_strided_layers": (
        lambda lib, x, k, w: lib.nn.functional.adaptive_avg_pool2d(
            lib.nn.functional.max_pool2d(
                lib.nn.functional.layer_norm(lib.nn.functional.conv2d(x, k, w[:3], stride=2), (2,), w[:2]),
                (1, 2),
            ),
            (3, 1),
        ),
        lambda lib: [lib.tensor(IMG[0]), lib.tensor(KER), lib.tensor(B)],
    ),
    "attention_and_losses": (
        lambda lib, q, k: lib.stack(
            [
                lib.nn.functional.cross_entropy(
                    lib.nn.functional.scaled_dot_product_attention(q, k, k.flip(1), is_causal=True).reshape(
                        6, 4
                    ),
                    lib.tensor(IDX.repeat(2)),
                    reduction="none",
                ),
                lib.nn.functional.scaled_dot_product_attention(q, k, k, lib.tensor(X[..., :3] > 0))
                .softmax(-1)[..., 0]
                .reshape(6),
            ]
        ),
        lambda lib: [lib.tensor(X), lib.tensor(X[:, ::-1].copy())],
    ),
    "matmul_and_fused_layers": (
        lambda lib, x, k: (
            lib.nn.functional.layer_norm(lib.nn.functional.conv2d(x, k, padding=1), (5, 5))
            @ x.mean(1, keepdim=True)
        ),
        lambda lib: [lib.tensor(IMG), lib.tensor(KER)],
    ),
}


def _batched(lib, name, create_graph=False):
    f, make = CASES[name]
    ins = [t.requires_grad_() for t in make(lib)]
    out = f(lib, *ins)
    cot = lib.tensor(np.random.default_rng(1).normal(size=(3, *out.shape)))
    grads = lib.autograd.grad(
        out, ins, cot, retain_graph=True, is_grads_batched=True, create_graph=create_graph
    )
    return grads, ins, out, cot


@pytest.mark.parametrize("name", CASES)
def test_one_batched_pass_gives_the_gradients_of_one_pass_per_entry(name):
    grads, ins, out, cot = _batched(dt, name)
    for k in range(cot.shape[0]):
        rows = dt.autograd.grad(out, ins, cot[k], retain_graph=True)
        for g, r in zip(grads, rows):
            np.testing.assert_allclose(g[k].numpy(), r.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize("name", CASES)
def test_batched_gradients_match_pytorch(torch, name):
    ours, theirs = _batched(dt, name)[0], _batched(torch, name)[0]
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-10)


def test_fused_numpy_backwards_run_per_entry_with_the_right_values():
    """Such backwards may read the arrays of the gradients they close over: never batched."""
    dt.manual_seed(0)
    gru = dt.nn.GRU(4, 3).double()
    s = dt.tensor(X, requires_grad=True)
    out = gru(dt.nn.functional.scaled_dot_product_attention(s, s, s))[0]
    ins = [s, *gru.parameters()]
    cot = dt.tensor(RNG.normal(size=(2, *out.shape)))
    grads = dt.autograd.grad(out, ins, cot, retain_graph=True, is_grads_batched=True)
    for k in range(2):
        for g, r in zip(grads, dt.autograd.grad(out, ins, cot[k], retain_graph=True)):
            np.testing.assert_allclose(g[k].numpy(), r.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "name", ["mlp", "conv_pool_norm_layers", "unbatched_strided_layers", "attention_and_losses"]
)
def test_common_layers_run_no_node_per_entry(monkeypatch, name):
    def refuse(node, *args):
        raise AssertionError(f"{node.name()} ran once per entry")

    monkeypatch.setattr(_batched_backward, "_per_entry", refuse)
    _batched(dt, name)


def test_batched_gradients_are_differentiable_with_create_graph():
    grads, ins, _, _ = _batched(dt, "mlp", create_graph=True)
    (second,) = dt.autograd.grad(grads[0].square().sum(), ins[1])
    x, w, b = (t.detach().requires_grad_() for t in ins)
    cot = dt.tensor(np.random.default_rng(1).normal(size=(3, 2, 3, 5)))
    total = sum(
        dt.autograd.grad(_mlp(dt, x, w, b), x, cot[k], create_graph=True)[0].square().sum() for k in range(3)
    )
    np.testing.assert_allclose(second.numpy(), dt.autograd.grad(total, w)[0].numpy(), rtol=1e-10)


def test_unused_inputs_and_unbatched_gradients():
    x, u = dt.tensor(X, requires_grad=True), dt.tensor(B, requires_grad=True)
    out = x * 2
    gx, gu = dt.autograd.grad(
        out, (x, u), dt.ones(4, *X.shape), True, is_grads_batched=True, allow_unused=True
    )
    assert gu is None and gx.shape == (4, *X.shape)
    np.testing.assert_allclose(gx.numpy(), 2.0)
    _, gu = dt.autograd.grad(out, (x, u), dt.ones(4, *X.shape), is_grads_batched=True, materialize_grads=True)
    assert gu.shape == (4, 5) and not gu.any()


def test_vectorized_jacobian_and_hessian_are_one_batched_pass():
    F = dt.autograd.functional
    w = dt.tensor(W)

    def f(x, y):
        return (dt.tanh(x @ w.T) * y.sum()).sin(), (x**2).sum(0)

    def g(x):
        return (dt.tanh(x @ w.T) ** 2).sum()

    x, y = dt.tensor(X[0]), dt.tensor(B)
    for loop, batched in zip(F.jacobian(f, (x, y)), F.jacobian(f, (x, y), vectorize=True)):
        for a, b in zip(loop, batched):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(F.hessian(g, x, vectorize=True).numpy(), F.hessian(g, x).numpy(), rtol=1e-12)


def test_matrix_products_flips_and_reads_backward_run_no_op_per_slice(monkeypatch):
    from disttorch.func import _batch_rules

    def refuse(func, *args, **kwargs):
        raise AssertionError(f"{getattr(func, '__name__', func)} ran once per slice")

    monkeypatch.setattr(_batch_rules, "per_slice", refuse)
    w, v = dt.tensor(W, requires_grad=True), dt.tensor(B, requires_grad=True)
    h = (w.mT @ (w @ w.mT @ v).tanh()).sin().flip(0) * w[1:3, ::2].sum()
    m = w.flip(-1)[dt.tensor([0, 2, 2])][:, dt.tensor(IDX)] + w[dt.tensor(W[:, 0] > 0)].sum()
    out = dt.cat([h, m.reshape(-1)[:3], w[..., 1], w[2, dt.tensor(IDX)]])
    cot = dt.tensor(RNG.normal(size=(3, *out.shape)))
    grads = dt.autograd.grad(out, (w, v), cot, retain_graph=True, is_grads_batched=True)
    for k in range(3):
        for g, r in zip(grads, dt.autograd.grad(out, (w, v), cot[k], retain_graph=True)):
            np.testing.assert_allclose(g[k].numpy(), r.numpy(), rtol=1e-12, atol=1e-12)


def _layer_norm_float32(lib, shape: tuple, normalized: tuple) -> tuple:
    """float32 ``layer_norm`` gradients for three cotangents: one batched pass, and one pass
    per cotangent."""
    rng = np.random.default_rng(2)
    x = lib.tensor(rng.normal(size=shape).astype(np.float32), requires_grad=True)
    w, b = (lib.tensor(rng.normal(size=normalized).astype(np.float32), requires_grad=True) for _ in range(2))
    out = lib.nn.functional.layer_norm(x, normalized, w, b)
    cot = lib.tensor(rng.normal(size=(3, *shape)).astype(np.float32))
    batched = lib.autograd.grad(out, (x, w, b), cot, retain_graph=True, is_grads_batched=True)
    rows = [lib.autograd.grad(out, (x, w, b), cot[k], retain_graph=True) for k in range(3)]
    return [g.numpy() for g in batched], [[r.numpy() for r in row] for row in rows]


LAYER_NORM_SHAPES = [((4, 8), (8,)), ((3, 40, 50), (50,)), ((2, 3, 8), (3, 8))]


@pytest.mark.parametrize("shape,normalized", LAYER_NORM_SHAPES)
def test_float32_layer_norm_batched_gradients_have_the_bits_of_one_pass_per_entry(shape, normalized):
    pytest.importorskip("numba")  # (PyTorch's float32 layer_norm kernels are the compiled ones)
    batched, rows = _layer_norm_float32(dt, shape, normalized)
    for k, row in enumerate(rows):
        for g, r in zip(batched, row):
            np.testing.assert_array_equal(g[k], r)


@pytest.mark.parity
@pytest.mark.parametrize("shape,normalized", LAYER_NORM_SHAPES)
def test_float32_layer_norm_batched_gradients_as_pytorch(torch, shape, normalized):
    ours, theirs = (
        _layer_norm_float32(dt, shape, normalized)[0],
        _layer_norm_float32(torch, shape, normalized)[0],
    )
    try:
        import numba  # noqa: F401 - PyTorch's compiled kernels: bit for bit
    except ImportError:
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1.3e-6, atol=1e-5)
    else:
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(a, b)
