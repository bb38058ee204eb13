"""Normalisation (``batch_norm``, ``layer_norm``, ``group_norm``, ``instance_norm`` and the
BatchNorm/LayerNorm/GroupNorm layers): closed-form values, running statistics, modes,
finite-difference gradients in float64, reprs and errors."""

import numpy as np
import pytest
from parity_helpers import copy_weights, randn, run_both

import disttorch as dt
import disttorch.nn as nn
import disttorch.nn.functional as F
from disttorch.autograd import gradcheck


def f64(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return dt.tensor(rng.standard_normal(shape) * 2 + 1, requires_grad=True)


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 2), (2, 3, 2, 3)])
def test_batch_norm_training_values_and_running_stats(shape):
    x = f64(*shape)
    xa = x.detach().numpy()
    axes = (0,) + tuple(range(2, len(shape)))
    rm, rv = dt.zeros(3, dtype=dt.float64), dt.ones(3, dtype=dt.float64)
    out = F.batch_norm(x, rm, rv, training=True, momentum=0.2, eps=1e-5)
    mean, var = xa.mean(axis=axes, keepdims=True), xa.var(axis=axes, keepdims=True)
    np.testing.assert_allclose(out.detach().numpy(), (xa - mean) / np.sqrt(var + 1e-5), atol=1e-12)
    n = xa.size // 3
    np.testing.assert_allclose(rm.numpy(), 0.2 * mean.ravel(), atol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.8 + 0.2 * var.ravel() * n / (n - 1), atol=1e-12)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_gradcheck(training):
    x, w, b = f64(4, 3, 2), f64(3, seed=1), f64(3, seed=2)
    rm = dt.tensor([0.1, -0.2, 0.3], dtype=dt.float64)
    rv = dt.tensor([1.5, 0.5, 2.0], dtype=dt.float64)
    assert gradcheck(
        lambda a, c, d: F.batch_norm(a, None if training else rm, None if training else rv, c, d, training),
        (x, w, b),
    )


def test_batch_norm_eval_uses_running_stats():
    x = f64(4, 3)
    rm = dt.tensor([1.0, 2.0, 3.0], dtype=dt.float64)
    rv = dt.tensor([4.0, 1.0, 0.25], dtype=dt.float64)
    out = F.batch_norm(x, rm, rv, training=False, eps=0.0)
    np.testing.assert_allclose(out.detach().numpy(), (x.detach().numpy() - rm.numpy()) / np.sqrt(rv.numpy()))


def test_batchnorm_module_momentum_none_is_cumulative_average_and_eval_mode():
    bn = nn.BatchNorm1d(2, momentum=None).double()
    batches = [f64(6, 2, seed=s).detach() for s in range(3)]
    for xb in batches:
        bn(xb)
    assert bn.num_batches_tracked.item() == 3
    np.testing.assert_allclose(
        bn.running_mean.numpy(), np.mean([xb.numpy().mean(0) for xb in batches], axis=0), atol=1e-12
    )
    np.testing.assert_allclose(
        bn.running_var.numpy(), np.mean([xb.numpy().var(0, ddof=1) for xb in batches], axis=0), atol=1e-12
    )
    bn.eval()
    out = bn(batches[0])
    expected = (batches[0].numpy() - bn.running_mean.numpy()) / np.sqrt(bn.running_var.numpy() + 1e-5)
    np.testing.assert_allclose(out.detach().numpy(), expected, atol=1e-12)
    assert bn.num_batches_tracked.item() == 3  # eval does not count


def test_batchnorm_without_running_stats_always_uses_batch_stats():
    bn = nn.BatchNorm2d(3, track_running_stats=False, affine=False)
    assert bn.running_mean is None and list(bn.parameters()) == []
    bn.eval()
    out = bn(dt.randn(4, 3, 2, 2) * 5 + 3)
    np.testing.assert_allclose(out.numpy().mean(axis=(0, 2, 3)), 0, atol=1e-5)


def test_batchnorm_module_defaults_state_and_repr():
    bn = nn.BatchNorm2d(3)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    np.testing.assert_array_equal(bn.weight.detach().numpy(), 1)
    np.testing.assert_array_equal(bn.bias.detach().numpy(), 0)
    assert bn.num_batches_tracked.dtype == dt.int64
    assert repr(bn) == (
        "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    )
    state = {k: v for k, v in bn.state_dict().items() if k != "num_batches_tracked"}
    nn.BatchNorm2d(3).load_state_dict(state)  # old checkpoints without the counter load


@pytest.mark.parametrize(
    "call,error,message",
    [
        (lambda: nn.BatchNorm2d(3)(dt.randn(2, 3, 4)), ValueError, "expected 4D input (got 3D input)"),
        (
            lambda: nn.BatchNorm1d(3)(dt.randn(2, 3, 4, 5)),
            ValueError,
            "expected 2D or 3D input (got 4D input)",
        ),
        (
            lambda: nn.BatchNorm1d(3)(dt.randn(1, 3)),
            ValueError,
            "Expected more than 1 value per channel when training, got input size disttorch.Size([1, 3])",
        ),
        (  # the batch-size check comes first, as PyTorch's F.batch_norm (before dtypes and sizes)
            lambda: F.batch_norm(dt.randn(1, 2, 1, dtype=dt.float64), dt.zeros(5), None, training=True),
            ValueError,
            "Expected more than 1 value per channel when training, got input size disttorch.Size([1, 2, 1])",
        ),
        (
            lambda: F.batch_norm(dt.randn(2, 3), dt.zeros(3), dt.ones(3), training=True, momentum=None),
            TypeError,
            "batch_norm(): argument 'momentum' (position 7) must be float, not NoneType",
        ),
        (
            lambda: F.batch_norm(dt.randn(1, 0), None, None, training=True),
            ValueError,
            "Expected more than 1 value per channel when training, got input size disttorch.Size([1, 0])",
        ),
        (
            lambda: F.batch_norm(dt.randn(2, 3, 4), dt.zeros(4), dt.ones(4)),
            RuntimeError,
            "running_mean should contain 3 elements not 4",
        ),
        (
            lambda: F.layer_norm(dt.randn(2, 3), (4,)),
            RuntimeError,
            "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[2, 3]",
        ),
        (
            lambda: F.group_norm(dt.randn(2, 6, 3), 4),
            RuntimeError,
            "Expected number of channels in input to be divisible by num_groups, but got input of shape "
            "[2, 6, 3] and num_groups=4",
        ),
        (lambda: nn.GroupNorm(3, 4), ValueError, "num_channels (4) must be divisible by num_groups (3)"),
    ],
)
def test_norm_errors(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)


def test_layer_norm_values_and_gradcheck():
    x, w, b = f64(2, 3, 4), f64(3, 4, seed=1), f64(3, 4, seed=2)
    xa = x.detach().numpy()
    mean, var = xa.mean(axis=(1, 2), keepdims=True), xa.var(axis=(1, 2), keepdims=True)
    out = F.layer_norm(x, (3, 4), w, b)
    np.testing.assert_allclose(
        out.detach().numpy(),
        (xa - mean) / np.sqrt(var + 1e-5) * w.detach().numpy() + b.detach().numpy(),
        atol=1e-12,
    )
    assert gradcheck(lambda a, c, d: F.layer_norm(a, (3, 4), c, d), (x, w, b))
    assert gradcheck(lambda a: F.layer_norm(a, 4), (x,))


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize(("shape", "normalized"), [((2, 3, 0), (0,)), ((2, 3, 0), (3, 0)), ((0, 4), (4,))])
def test_layer_norm_of_no_elements_is_empty_as_pytorchs(shape, normalized, dtype):
    """PyTorch returns an empty output and zero gradients; the rows of no entries divided by
    zero here (ZeroDivisionError in the forward and the backward)."""
    x = dt.randn(*shape, dtype=getattr(dt, dtype), requires_grad=True)
    w = dt.ones(normalized, dtype=x.dtype, requires_grad=True)
    y = F.layer_norm(x, normalized, w, w)
    y.sum().backward()
    assert y.shape == x.shape and x.grad.shape == x.shape
    assert w.grad.shape == w.shape and not w.grad.any()


@pytest.mark.parametrize("jit", ["1", "0"])
def test_float32_layer_norm_is_pytorchs_to_the_bit(torch, monkeypatch, jit):
    """PyTorch's CPU kernel: Welford moments on 8 lanes with fused multiply-adds, then
    ``fma((x - mean) * rstd, weight, bias)`` (``fma(x - mean, rstd, bias)`` without a weight);
    the tail after the last whole vector and rows of many chunks included; compiled, and in
    NumPy (all rows at once: it was within float32 rounding of it before)."""
    if jit == "1":
        pytest.importorskip("numba")
    monkeypatch.setenv("DISTTORCH_JIT", jit)
    rng = np.random.default_rng(0)
    for d in (7, 40, 768, 5000, 2056):
        x = (rng.standard_normal((6, d)) * 3 + 1).astype(np.float32)
        w, b = rng.random(d, dtype=np.float32) + 0.5, rng.standard_normal(d).astype(np.float32)
        for wb in ((w, b), (None, b), (w, None), (None, None)):
            ours = F.layer_norm(dt.tensor(x), (d,), *(None if a is None else dt.tensor(a) for a in wb))
            theirs = torch.nn.functional.layer_norm(
                torch.tensor(x), (d,), *(None if a is None else torch.tensor(a) for a in wb)
            )
            assert np.array_equal(ours.numpy(), theirs.numpy()), (d, [a is None for a in wb])
    xt = torch.tensor(x, requires_grad=True)
    out, mean, rstd = torch.ops.aten.native_layer_norm(xt, (d,), None, None, 1e-5)
    node = F.layer_norm(dt.tensor(x, requires_grad=True), (d,)).grad_fn
    assert np.array_equal(node._saved_result1.numpy(), mean.detach().numpy())
    assert np.array_equal(node._saved_result2.numpy(), rstd.detach().numpy())
    assert np.array_equal(F.layer_norm(dt.tensor(x), (d,)).numpy(), out.detach().numpy())


@pytest.mark.parametrize("threads, jit", [(1, "1"), (3, "1"), (3, "0")])
def test_float32_layer_norm_grads_are_pytorchs_to_the_bit(torch, monkeypatch, threads, jit):
    """The gradients as PyTorch's kernel computes them: the weight and bias gradients summed
    in one share of rows per thread, row after row, the shares then added in order; the input
    gradient from per-row sums on 8 lanes (whole vectors, then the part vector fused, then
    folded), with and without a weight, rows shorter than a vector included; compiled, and
    in NumPy (within float32 rounding of it before)."""
    if jit == "1":
        pytest.importorskip("numba")
    monkeypatch.setenv("DISTTORCH_JIT", jit)
    rng = np.random.default_rng(1)
    before = (dt.get_num_threads(), torch.get_num_threads())
    dt.set_num_threads(threads)
    torch.set_num_threads(threads)
    try:
        for rows, d in ((32, 32), (1000, 96), (7, 768), (4, 5), (1, 9), (3, 1001)):
            x, g = (rng.standard_normal((2, rows, d)) * 3 + 1).astype(np.float32)
            w, b = rng.standard_normal((2, d)).astype(np.float32)
            for affine in (True, False):
                grads = []
                for lib in (dt, torch):
                    xt = lib.tensor(x, requires_grad=True)
                    wb = [lib.tensor(a, requires_grad=True) for a in (w, b)] if affine else []
                    lib.nn.functional.layer_norm(xt, (d,), *wb).backward(lib.tensor(g))
                    grads.append([t.grad.numpy() for t in [xt, *wb]])
                for ours, theirs in zip(*grads):
                    assert np.array_equal(ours, theirs), (rows, d, affine)
    finally:
        dt.set_num_threads(before[0])
        torch.set_num_threads(before[1])


@pytest.mark.parametrize("threads", [1, 2])
def test_float32_layer_norm_grads_under_vmap_are_pytorchs_to_the_bit(torch, threads):
    """A batch of cotangents through ``vmap`` (a ``vjp_fn``, ``jacrev``) takes PyTorch's batching
    rule: bias and weight gradients by ``sum`` over the input's leading dims of the batched
    ``g`` and ``g * x̂``, the input gradient by the kernel without a weight, of ``g * weight``."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(threads)
    before = (dt.get_num_threads(), torch.get_num_threads())
    dt.set_num_threads(threads)
    torch.set_num_threads(threads)
    try:
        for shape in [(8, 5, 16), (4, 3, 37), (5, 7), (9,), (2, 3, 100)]:
            d = shape[-1]
            x = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
            w, b = rng.standard_normal((2, d)).astype(np.float32)
            cot = rng.standard_normal((3, *shape)).astype(np.float32)
            for affine in (True, False):
                grads = []
                for lib in (dt, torch):
                    params = [lib.from_numpy(a) for a in (w, b)] if affine else [None, None]

                    def f(xi, *p, lib=lib, params=params):
                        return lib.nn.functional.layer_norm(xi, (d,), *(p if affine else params))

                    _, vjp_fn = lib.func.vjp(f, lib.from_numpy(x), *(params if affine else []))
                    grads.append([t.numpy() for t in lib.func.vmap(vjp_fn)(lib.from_numpy(cot))])
                for ours, theirs in zip(*grads):
                    np.testing.assert_array_equal(ours, theirs, err_msg=f"{shape} affine={affine}")
    finally:
        dt.set_num_threads(before[0])
        torch.set_num_threads(before[1])


def test_layernorm_module():
    ln = nn.LayerNorm(4)
    assert repr(ln) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)"
    assert [n for n, _ in ln.named_parameters()] == ["weight", "bias"]
    assert nn.LayerNorm(4, bias=False).bias is None
    assert list(nn.LayerNorm((2, 4), elementwise_affine=False).parameters()) == []
    out = ln(dt.randn(5, 4) * 3 + 2)
    np.testing.assert_allclose(out.detach().numpy().mean(-1), 0, atol=1e-5)
    np.testing.assert_allclose(out.detach().numpy().std(-1), 1, atol=1e-3)


def test_batch_and_instance_norms_take_bias_false():
    """``bias=False`` (keyword) keeps the affine weight only, in every batch/instance norm."""
    made = [
        nn.BatchNorm1d(3, bias=False),
        nn.InstanceNorm2d(3, affine=True, bias=False),
        nn.SyncBatchNorm(3, bias=False),
        nn.LazyBatchNorm1d(bias=False),
        nn.LazyInstanceNorm1d(bias=False),
    ]
    for m in made:
        assert m.bias is None and m.weight is not None, m
    assert "affine=True, bias=False" in repr(made[1])
    lazy = made[3]
    lazy(dt.randn(4, 3))
    assert type(lazy) is nn.BatchNorm1d and [n for n, _ in lazy.named_parameters()] == ["weight"]


def test_group_norm_values_gradcheck_and_module():
    x, w, b = f64(2, 6, 5), f64(6, seed=1), f64(6, seed=2)
    xa = x.detach().numpy().reshape(2, 3, -1)
    norm = ((xa - xa.mean(-1, keepdims=True)) / np.sqrt(xa.var(-1, keepdims=True) + 1e-5)).reshape(2, 6, 5)
    out = F.group_norm(x, 3, w, b)
    np.testing.assert_allclose(
        out.detach().numpy(), norm * w.detach().numpy()[:, None] + b.detach().numpy()[:, None], atol=1e-12
    )
    assert gradcheck(lambda a, c, d: F.group_norm(a, 3, c, d), (x, w, b))
    gn = nn.GroupNorm(2, 4)
    assert repr(gn) == "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"
    assert gn(dt.randn(3, 4, 2, 2)).shape == (3, 4, 2, 2)


def test_instance_norm_normalises_each_channel_of_each_sample():
    x = f64(2, 3, 7)
    out = F.instance_norm(x).detach().numpy()
    np.testing.assert_allclose(out.mean(-1), 0, atol=1e-12)
    rm, rv = dt.zeros(3, dtype=dt.float64), dt.ones(3, dtype=dt.float64)
    F.instance_norm(x, rm, rv, momentum=1.0)
    np.testing.assert_allclose(rm.numpy(), x.detach().numpy().mean(-1).mean(0), atol=1e-12)


def test_instance_norm_gradcheck():
    x, w, b = f64(2, 3, 4), f64(3, seed=1), f64(3, seed=2)
    assert gradcheck(lambda a, c, d: F.instance_norm(a, weight=c, bias=d), (x, w, b))


def test_batchnorm_survives_pickling_with_its_scalar_counter():
    import pickle

    bn = nn.BatchNorm1d(3)
    bn(dt.randn(4, 3))
    copy = pickle.loads(pickle.dumps(bn))
    assert copy.num_batches_tracked.shape == () and copy.num_batches_tracked.item() == 1
    np.testing.assert_array_equal(copy.running_mean.numpy(), bn.running_mean.numpy())


# ---------------------------------------------------------------------- parity with PyTorch
@pytest.mark.parity
@pytest.mark.parametrize(
    "cls,shape,kw",
    [
        ("BatchNorm1d", (8, 3), dict()),
        ("BatchNorm1d", (4, 3, 5), dict(momentum=None)),
        ("BatchNorm2d", (4, 3, 5, 5), dict(momentum=0.3)),
        ("BatchNorm2d", (4, 3, 2, 2), dict(affine=False)),
    ],
)
def test_batchnorm_parity_running_stats_and_eval(torch, cls, shape, kw):
    theirs, ours = getattr(torch.nn, cls)(3, **kw), getattr(dt.nn, cls)(3, **kw)
    with torch.no_grad():
        for p in theirs.parameters():
            p.uniform_(0.5, 1.5)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(*shape) * 3 + 1, steps=4)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(
            getattr(ours, name).numpy(), getattr(theirs, name).numpy(), rtol=1e-5, atol=1e-6, err_msg=name
        )
    ours.eval(), theirs.eval()
    x = randn(*shape)
    np.testing.assert_allclose(
        ours(dt.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5
    )


@pytest.mark.parity
@pytest.mark.parametrize(
    "make,shape",
    [
        (lambda nn: nn.LayerNorm(6), (4, 5, 6)),
        (lambda nn: nn.LayerNorm((5, 6), bias=False), (4, 5, 6)),
        (lambda nn: nn.GroupNorm(2, 4), (3, 4, 5, 2)),
    ],
)
def test_layer_and_group_norm_parity(torch, make, shape):
    theirs, ours = make(torch.nn), make(dt.nn)
    with torch.no_grad():
        for p in theirs.parameters():
            p.uniform_(0.5, 1.5)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(*shape) * 2 + 1)


def test_float32_batch_norm_has_pytorchs_bits(torch):
    """Training mode (statistics, running update, fused affine map) and evaluation mode of a
    contiguous float32 input, with and without affine parameters (kernels/torch_batch_norm.py)."""
    rng = np.random.default_rng(21)
    before = (dt.get_num_threads(), torch.get_num_threads())
    try:
        for threads, shapes in (
            (1, [(16, 6, 9, 9), (64, 10), (3, 4, 5, 6, 2)]),
            (3, [(32, 8, 15, 15), (100, 12)]),
        ):
            dt.set_num_threads(threads)
            torch.set_num_threads(threads)
            for shape in shapes:
                x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
                c = shape[1]
                w, b, rm, rv = (rng.standard_normal(c).astype(np.float32) for _ in range(4))
                rv = np.abs(rv) + 0.5
                for affine in (False, True):
                    for training in (True, False):
                        d_stats, t_stats = (
                            (dt.from_numpy(rm.copy()), dt.from_numpy(rv.copy())),
                            (
                                torch.from_numpy(rm.copy()),
                                torch.from_numpy(rv.copy()),
                            ),
                        )
                        d_wb = (dt.from_numpy(w), dt.from_numpy(b)) if affine else (None, None)
                        t_wb = (torch.from_numpy(w), torch.from_numpy(b)) if affine else (None, None)
                        got = dt.nn.functional.batch_norm(
                            dt.from_numpy(x), *d_stats, *d_wb, training=training
                        )
                        want = torch.nn.functional.batch_norm(
                            torch.from_numpy(x), *t_stats, *t_wb, training=training
                        )
                        case = (threads, shape, affine, training)
                        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=str(case))
                        for mine, theirs in zip(d_stats, t_stats):
                            np.testing.assert_array_equal(mine.numpy(), theirs.numpy(), err_msg=str(case))
    finally:
        dt.set_num_threads(before[0])
        torch.set_num_threads(before[1])


@pytest.mark.parametrize(
    "norm, params",
    [
        (lambda x, w, b: F.batch_norm(x, None, None, w[:2], b[:2], training=True), 2),
        (lambda x, w, b: F.batch_norm(x, b[:2] * 0 + 0.5, b[:2] * 0 + 2.0, w[:2], b[:2]), 2),
        (lambda x, w, b: F.instance_norm(x, weight=w[:2], bias=b[:2]), 2),
        (lambda x, w, b: F.group_norm(x, 2, w[:2], b[:2]), 2),
        (lambda x, w, b: F.layer_norm(x, (3,), w, b), 2),
        (lambda x: F.layer_norm(x, (2, 3)), 0),
    ],
)
def test_normalisations_are_differentiable_twice(norm, params):
    # create_graph records their backward with tensor ops: a gradient penalty through a
    # normalised critic differentiates the input gradient again
    rng = np.random.default_rng(0)
    x = dt.tensor(rng.normal(size=(2, 2, 3)), requires_grad=True)
    wb = [dt.tensor(rng.normal(size=3), requires_grad=True) for _ in range(params)]
    assert dt.autograd.gradgradcheck(lambda *a: norm(*a).sin(), (x, *wb))


@pytest.mark.parity
def test_gradient_penalty_through_normalisations_matches_pytorch(torch):
    x0 = np.random.default_rng(2).normal(size=(3, 4, 2, 2))

    def penalty(lib):
        x = lib.tensor(x0, requires_grad=True)
        mods = [lib.nn.BatchNorm2d(4), lib.nn.GroupNorm(2, 4), lib.nn.LayerNorm([2, 2])]
        y = x
        for m in mods:
            y = m.double()(y).tanh()
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        ((g.flatten(1).norm(dim=1) - 1) ** 2).mean().backward()
        return [x.grad.numpy()] + [p.grad.numpy() for m in mods for p in m.parameters()]

    for ours, theirs in zip(penalty(dt), penalty(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
