"""vmap's batching rules, family by family, against PyTorch's vmap (values and gradients through
the vmapped function); nested vmap, in_dims/out_dims, chunks, randomness, the per-slice
fallback and the errors of data-dependent ops."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.func import _batch_rules, _batch_rules_nn

RNG = np.random.default_rng(36)
X = RNG.normal(size=(3, 4, 5))  # a batch of 3 samples of shape (4, 5)
W = RNG.normal(size=(5, 2))
V = RNG.normal(size=5)
IMG = RNG.normal(size=(2, 3, 2, 6, 6))  # 2 samples of (N=3, C=2, 6, 6)
KER = RNG.normal(size=(4, 2, 3, 3))
KERS = RNG.normal(size=(2, 4, 2, 3, 3))  # one kernel per sample
LOGITS = RNG.normal(size=(2, 4, 3))
LABELS = np.array([[0, 2, 1, 2], [1, 1, 0, -100]])


@pytest.fixture
def rules_only(monkeypatch):
    """Fail a case that falls back to calling the op once per slice."""

    def refuse(func, *args, **kwargs):
        raise AssertionError(f"{getattr(func, '__name__', func)} ran once per slice")

    monkeypatch.setattr(_batch_rules, "per_slice", refuse)
    monkeypatch.setattr(_batch_rules_nn, "per_slice", refuse)


def _run(lib, f, arrays, in_dims, grads=True):
    """vmap(f) of ``arrays`` in ``lib``, and the gradients of a weighted sum of its outputs
    w.r.t. the floating inputs."""
    ts = [lib.tensor(a, requires_grad=grads and a.dtype.kind == "f") for a in arrays]
    out = lib.func.vmap(lambda *a: f(lib, *a), in_dims=in_dims)(*ts)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    diff = [t for t in ts if t.requires_grad]
    g = []
    if grads and diff:
        flo = [o for o in outs if o.is_floating_point() and o.requires_grad]
        total = sum((o * lib.tensor(np.cos(np.arange(o.numel())).reshape(tuple(o.shape)))).sum() for o in flo)
        g = lib.autograd.grad(total, diff, allow_unused=True) if flo else []
    return [o.detach().numpy() for o in outs], [None if x is None else x.numpy() for x in g]


def _compare(torch, f, arrays, in_dims=0, grads=True):
    got, got_g = _run(dt, f, arrays, in_dims, grads)
    want, want_g = _run(torch, f, arrays, in_dims, grads)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)
    for a, b in zip(got_g, want_g):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


POINTWISE = {
    "arith": (lambda L, x, v: (x * v + x.sin() / 2 - 1).clamp(-0.5, 0.5) ** 2, [X, V], (0, None)),
    "both_batched": (
        lambda L, x, y: L.where(x > 0, x, y.exp()) + L.maximum(x, y),
        [X, np.ascontiguousarray(X[:, :, ::-1])],
        0,
    ),
    "rank_pad": (lambda L, x, v: x + v, [X, X[:, 0, :]], 0),
    "masked_fill": (lambda L, x: x.masked_fill(x < 0, 0.5).relu() * 3, [X], 0),
    "activations": (
        lambda L, x: L.nn.functional.gelu(x) + L.sigmoid(x) + L.nn.functional.silu(x).tanh(),
        [X],
        0,
    ),
    "in_place": (lambda L, x: (x * 1).mul_(2).add_(1), [X], 0),
}

DIMS = {
    "sum_dim": lambda L, x: x.sum(1),
    "sum_all_keepdim": lambda L, x: x.sum(dim=None, keepdim=True) if L is dt else x.sum((0, 1), keepdim=True),
    "mean_all": lambda L, x: x.mean(),
    "softmax": lambda L, x: x.softmax(-1) + L.nn.functional.log_softmax(x, dim=0),
    "max_dim": lambda L, x: x.max(dim=0).values + x.amax(),
    "std_var": lambda L, x: x.std(1) + x.var(),
    "cumsum": lambda L, x: x.cumsum(0),
    "sort_topk": lambda L, x: (x.sort(-1)[0], x.topk(2)[0]),
    "logsumexp_norm": lambda L, x: x.logsumexp(-1) + x.norm(dim=-1),
    "argmax": lambda L, x: x.argmax(),
}

SHAPES = {
    "view_reshape": lambda L, x: (x.view(20), x.reshape(2, -1), x.flatten(), x.view_as(x.T.contiguous())),
    "transposes": lambda L, x: (x.transpose(0, 1), x.permute(1, 0), x.t(), x.T, x.mT),
    "unsqueeze_squeeze": lambda L, x: (x.unsqueeze(0), x.unsqueeze(-1).squeeze(), x[None].squeeze(0)),
    "expand_repeat": lambda L, x: (x[:1].expand(3, 5), x.repeat(2, 1), x.expand(2, 4, 5)),
    "indexing": lambda L, x: (x[1], x[:, 1:3], x[..., 0], x[L.tensor([0, 2])], x[1:, L.tensor([4, 0])]),
    "select_narrow": lambda L, x: (x.select(1, 2), x.narrow(1, 1, 2), x.flip(0), x.movedim(0, 1)),
    "split_unbind": lambda L, x: (*x.split(2, dim=1), *x.chunk(2, -1), *x.unbind(0)),
    "cat_stack": lambda L, x: (L.cat([x, L.ones(2, 5, dtype=x.dtype)]), L.stack([x, x * 2], dim=-1)),
    "matrices": lambda L, x: (
        x.tril(),
        L.triu(x, 1),
        L.det(x[:, :4] + 4 * L.eye(4)),
        L.inverse(x[:, 1:] + 5 * L.eye(4)),
    ),
    "gather": lambda L, x: x.gather(1, L.tensor([[0, 1], [2, 3], [4, 0], [1, 1]])),
}

MATMULS = {
    "matmul_unbatched_right": (lambda L, x, w: x @ w, [X, W], (0, None)),
    "matmul_both": (lambda L, x, w: L.matmul(x, w), [X, np.stack([W] * 3)], 0),
    "vector_left": (lambda L, v, x: (L.matmul(v[:4], x), x @ v), [np.stack([V] * 3), X], 0),
    "mm_mv_dot": (lambda L, x, v: (L.mm(x, x.T), L.mv(x, v), L.dot(v, v)), [X, np.stack([V] * 3)], 0),
    "linear": (lambda L, x, w: L.nn.functional.linear(x, w.T, w[0]), [X, W], (0, None)),
    "linear_batched_weight": (lambda L, x, w: L.nn.functional.linear(x, w, w[:, 0]), [X, X[:, :2, :]], 0),
    "addmm_outer": (
        lambda L, x, w: L.addmm(w[0], x, w, beta=0.5, alpha=2) + L.outer(x[0], x[1])[:4, :2],
        [X, W],
        (0, None),
    ),
    "einsum": (
        lambda L, x, w: (L.einsum("ij,jk->ik", x, w), L.einsum("ij,ij", x, x), L.einsum("...j,j", x, x[0])),
        [X, W],
        (0, None),
    ),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(POINTWISE))
def test_pointwise_rules_match_pytorch(torch, rules_only, name):
    f, arrays, dims = POINTWISE[name]
    _compare(torch, f, arrays, dims)


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(DIMS))
def test_dim_rules_match_pytorch(torch, rules_only, name):
    _compare(torch, DIMS[name], [X], 0, grads=name != "argmax")


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shape_and_indexing_rules_match_pytorch(torch, rules_only, name):
    _compare(torch, SHAPES[name], [X], 0)


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(MATMULS))
def test_matmul_family_rules_match_pytorch(torch, rules_only, name):
    f, arrays, dims = MATMULS[name]
    _compare(torch, f, arrays, dims)


NN = {
    "conv2d": (lambda L, x, k: L.nn.functional.conv2d(x, k, padding=1), [IMG, KER], (0, None)),
    "conv2d_one_image": (
        lambda L, x, k: L.nn.functional.conv2d(x[0], k, k[:, 0, 0, 0]),
        [IMG, KER],
        (0, None),
    ),
    "conv2d_batched_weight": (
        lambda L, x, k: L.nn.functional.conv2d(x, k, k[:, 0, 0, 0], stride=2),
        [IMG, KERS],
        0,
    ),
    "pools": (
        lambda L, x: (
            L.nn.functional.max_pool2d(x, 2),
            L.nn.functional.avg_pool2d(x, 3, stride=1),
            L.nn.functional.adaptive_avg_pool2d(x, 2),
        ),
        [IMG],
        0,
    ),
    "norms": (
        lambda L, x, k: (
            L.nn.functional.batch_norm(x, None, None, k[0, :, 0, 0], k[1, :, 0, 0], training=True),
            L.nn.functional.layer_norm(x, (6, 6)),
            L.nn.functional.group_norm(x, 2, k[2, :, 0, 0]),
        ),
        [IMG, KER],
        (0, None),
    ),
    "losses": (
        lambda L, x, y: (
            L.nn.functional.cross_entropy(x, y),
            L.nn.functional.cross_entropy(
                x, y, weight=L.tensor([0.2, 1.0, 3.0], dtype=x.dtype), reduction="sum"
            ),
            L.nn.functional.nll_loss(x.log_softmax(-1), y, reduction="none"),
            L.nn.functional.mse_loss(x, x.flip(0)),
            L.nn.functional.binary_cross_entropy_with_logits(x, x.sigmoid()),
            L.nn.functional.kl_div(x.log_softmax(-1), x.softmax(0), reduction="batchmean"),
        ),
        [LOGITS, LABELS],
        0,
    ),
    "attention": (
        lambda L, q, k, m: (
            L.nn.functional.scaled_dot_product_attention(q, k, k * 2, is_causal=True),
            L.nn.functional.scaled_dot_product_attention(q, k, q, attn_mask=m),
        ),
        [IMG[:, :, 0], IMG[0, :, 1], np.tril(np.ones((6, 6), dtype=bool))],
        (0, None, None),
    ),
    "pad": (lambda L, x: L.nn.functional.pad(x, (1, 2, 0, 1), value=0.5), [IMG], 0),
    "embedding": (
        lambda L, i, w: L.nn.functional.embedding(i, w),
        [np.array([[0, 2], [4, 1]]), W],
        (0, None),
    ),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(NN))
def test_nn_rules_match_pytorch(torch, rules_only, name):
    f, arrays, dims = NN[name]
    _compare(torch, f, arrays, dims)


SPD = X[:, :4, :4] @ X[:, :4, :4].transpose(0, 2, 1) + 4 * np.eye(4)  # 3 well-conditioned 4x4
NAMESPACES = {
    "linalg_matrices": (
        lambda L, a: (L.linalg.det(a), L.linalg.slogdet(a)[1], L.linalg.inv(a), L.linalg.cholesky(a)),
        [SPD],
        0,
    ),
    "linalg_solve": (
        lambda L, a, b, c: (L.linalg.solve(a, b), L.linalg.solve(a, c), L.linalg.solve(L.tensor(SPD[0]), b)),
        [SPD, X[:, 0, :4], X[:, :4, :2]],
        (0, 0, 0),
    ),
    "linalg_lstsq_solve_triangular": (
        lambda L, a, b, t: (
            L.linalg.lstsq(a, b[:, :2]).solution,
            L.linalg.lstsq(a, b[:, :2]).rank,
            L.linalg.lstsq(L.tensor(X[0, :, :3]), b).solution,
            L.linalg.solve_triangular(t, b[:4], upper=True),
            L.linalg.solve_triangular(
                L.tensor(SPD[0]), b[:4].mT, upper=False, left=False, unitriangular=True
            ),
        ),
        [X[:, :, :3], X[:, :, 3:], SPD],
        0,
    ),
    "linalg_norms": (
        lambda L, x: (
            L.linalg.norm(x),
            L.linalg.norm(x, ord="nuc"),
            L.linalg.norm(x, ord=1, dim=-1, keepdim=True),
            L.linalg.vector_norm(x, ord=3),
            L.linalg.matrix_norm(x, ord=2),
        ),
        [X],
        0,
    ),
    "special": (
        lambda L, x: (
            L.special.expit(x) + L.special.ndtr(x) + L.special.i1e(x),
            L.special.xlog1py(x, x.abs()),
            L.special.logsumexp(x, -1),
        ),
        [X],
        0,
    ),
    "fft": (
        lambda L, x: (
            L.fft.fft(x).abs(),
            L.fft.fft(x, dim=0).real,
            L.fft.irfft(L.fft.rfft(x, n=8), n=8),
            L.fft.fftn(x, s=(4,)).imag,
            L.fft.fftshift(x),
        ),
        [X],
        0,
    ),
}


IDX = RNG.integers(0, 4, size=(3, 2))  # one index tensor per sample
IN_W, OUT_W = RNG.normal(size=(15, 5)), RNG.normal(size=(5, 5))  # attention of 5 features, one head
PAD = np.array([[False, False, True, False]] * 3)  # per sample, a key left out


def _mha(L, q, pad, in_w, out_w):
    F = L.nn.functional
    return F.multi_head_attention_forward(
        q, q, q, 5, 1, in_w, in_w[:, 0], None, None, False, 0.0, out_w, out_w[0], key_padding_mask=pad
    )


MORE = {
    "batched_indices": (
        lambda L, x, i, w: (x[i], x[:, i % 2], x[i, i], x[1:, i], w[i]),
        [X, IDX, W],
        (0, 0, None),
    ),
    "distances": (
        lambda L, x, y: (
            L.nn.functional.cosine_similarity(x, y, dim=-1),
            L.cosine_similarity(x, y[0], dim=0),
            L.cdist(x, y),
            L.cdist(x, y[:2], p=1.0),
        ),
        [X, np.ascontiguousarray(X[:, ::-1])],
        0,
    ),
    "multi_head_attention": (_mha, [X, PAD, IN_W, OUT_W], (0, 0, None, None)),
    "multi_head_attention_with_n": (
        lambda L, q, pad, in_w, out_w: _mha(L, q.unsqueeze(1).expand(4, 2, 5), pad.expand(2, 4), in_w, out_w),
        [X, PAD, IN_W, OUT_W],
        (0, 0, None, None),
    ),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(MORE))
def test_batched_index_distance_and_attention_rules_match_pytorch(torch, rules_only, name):
    f, arrays, dims = MORE[name]
    _compare(torch, f, arrays, dims)


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(NAMESPACES))
def test_linalg_special_and_fft_rules_match_pytorch(torch, rules_only, name):
    f, arrays, dims = NAMESPACES[name]
    _compare(torch, f, arrays, dims)


@pytest.mark.parity
def test_nested_vmap_in_dims_out_dims_and_chunks_match_pytorch(torch):
    def run(lib):
        x, w = lib.tensor(X), lib.tensor(W)
        inner = lib.func.vmap(lambda r, m: (r @ m).tanh(), in_dims=(0, None))
        outer = lib.func.vmap(inner, in_dims=(-1, None), out_dims=1)(x.transpose(0, 2), w[:4])
        tree = lib.func.vmap(
            lambda d, s: {"a": d["p"] * s, "b": d["q"].sum()},
            in_dims=({"p": 1, "q": None}, 0),
            out_dims={"a": -1, "b": 0},
            chunk_size=2,
        )({"p": x, "q": w}, x[0, :, 0])
        return [outer, tree["a"], tree["b"]]

    for a, b in zip(run(dt), run(torch)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


@pytest.mark.parity
def test_per_sample_gradients_and_jacobians_match_pytorch(torch, rules_only):
    def run(lib):
        F = lib.nn.functional
        params = {"w": lib.tensor(W), "k": lib.tensor(KER[:, :, :2, :2])}
        x, y = lib.tensor(IMG[:, 0]), lib.tensor([1, 0])

        def loss(p, sample, target):
            h = F.conv2d(sample.unsqueeze(0), p["k"]).relu().mean((2, 3)) @ p["w"][:4]
            return F.cross_entropy(h, target.unsqueeze(0))

        g = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
        jac = lib.func.vmap(lib.func.jacrev(lambda v: (v @ params["w"]).tanh()))(lib.tensor(X[:, 0]))
        hess = lib.func.hessian(lambda v: (v @ params["w"]).tanh().sum())(lib.tensor(V))
        m = params["w"].T
        hess2 = lib.func.hessian(lambda v: (m.T @ (m @ v).tanh()).sin().sum())(lib.tensor(V))
        return [g["w"], g["k"], jac, hess, hess2]

    for a, b in zip(run(dt), run(torch)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-12)


def test_vmapped_function_passes_gradcheck():
    w = dt.tensor(W)
    f = dt.func.vmap(lambda r: (r @ w[:2]).softmax(-1).sum(0) * r[0, :2], in_dims=1)
    assert dt.autograd.gradcheck(f, (dt.tensor(X[:2, :3, :2], requires_grad=True),))


def test_ops_without_a_rule_run_once_per_slice():
    x = dt.tensor(RNG.normal(size=(3, 2, 2)) + 2 * np.eye(2), requires_grad=True)
    out = dt.func.vmap(lambda m: dt.linalg.det(m) + dt.kron(m, m).sum())(x)
    expected = [np.linalg.det(m) + np.kron(m, m).sum() for m in x.detach().numpy()]
    np.testing.assert_allclose(out.detach().numpy(), expected)
    (g,) = dt.autograd.grad(out.sum(), x)
    assert g.shape == (3, 2, 2)


def test_data_dependent_ops_and_in_place_into_unbatched_raise_as_pytorch():
    x = dt.tensor(X)
    with pytest.raises(RuntimeError, match=r"vmap: It looks like you're calling \.item\(\)"):
        dt.func.vmap(lambda r: r.sum().item())(x)
    with pytest.raises(RuntimeError, match="doesn't have storage"):
        dt.func.vmap(lambda r: np.asarray(r))(x)
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        dt.func.vmap(lambda r: 1 if r.sum() > 0 else 0)(x)
    with pytest.raises(
        RuntimeError, match=r"output with shape \[4, 5\] doesn't match the broadcast shape \[3, 4, 5\]"
    ):
        dt.func.vmap(lambda r: dt.zeros(4, 5, dtype=r.dtype).add_(r))(x)
    with pytest.raises(RuntimeError, match="operators that can output dynamic shape"):
        dt.func.vmap(lambda r: dt.where(r > 0)[0])(x)
    with pytest.raises(RuntimeError, match="Batch norm got a batched tensor as input while the running_mean"):
        dt.func.vmap(dt.nn.BatchNorm1d(5))(x)
    with pytest.raises(ValueError, match="expected in_dim to satisfy -3 <= in_dim < 3"):
        dt.func.vmap(lambda r: r, in_dims=3)(x)
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        dt.func.vmap(lambda r: r, out_dims=None)(x)


def test_randomness_modes():
    x = dt.ones(4, 1000)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        dt.func.vmap(lambda r: dt.nn.functional.dropout(r))(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        dt.func.vmap(lambda r: r + dt.rand(1000))(x)
    same = dt.func.vmap(lambda r: dt.nn.functional.dropout(r) + dt.rand_like(r), randomness="same")(x)
    different = dt.func.vmap(lambda r: dt.nn.functional.dropout(r), randomness="different")(x)
    assert (same == same[0]).all()
    assert not (different == different[0]).all()
    assert (dt.func.vmap(lambda r: dt.nn.functional.dropout(r, training=False))(x) == 1).all()


def _factory_draws(lib):
    """Factories that take no batched tensor, under each randomness mode and nested levels."""
    f64 = {"dtype": lib.float64}
    cases = {
        "rand": (lambda r: r + lib.rand(3, **f64), "different"),
        "randn": (lambda r: r + lib.randn(3, **f64), "different"),
        "randint": (lambda r: r + lib.randint(0, 10, (3,)), "different"),
        "normal": (lambda r: r + lib.normal(1.0, 2.0, (3,), **f64), "different"),
        "randperm": (lambda r: r + lib.randperm(3), "different"),
        "same": (lambda r: r + lib.rand(3, **f64), "same"),
    }
    out = {}
    for name, (f, randomness) in cases.items():
        lib.manual_seed(0)
        out[name] = lib.func.vmap(f, randomness=randomness)(lib.zeros(4, 3, **f64)).numpy()
    lib.manual_seed(0)
    inner = lib.func.vmap(lambda r: r + lib.rand((), **f64), randomness="different")
    out["nested"] = lib.func.vmap(inner, randomness="same")(lib.zeros(2, 3, **f64)).numpy()
    return out


def test_factories_draw_per_sample_under_randomness_different():
    draws = _factory_draws(dt)
    assert all(len({tuple(row) for row in draws[k]}) == 4 for k in ("rand", "randn", "normal"))
    assert (draws["same"] == draws["same"][0]).all() and (draws["nested"] == draws["nested"][0]).all()


@pytest.mark.parity
def test_factory_draws_match_pytorch(torch):
    ours, theirs = _factory_draws(dt), _factory_draws(torch)
    for name in ours:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-12, err_msg=name)


def test_float32_jacobians_of_copies_round_as_the_unbatched_function():
    """A transform inside vmap expands its inputs; a matrix product of such copies takes its
    values from one copy, so the batched Jacobian equals the summed-output one exactly and
    the Hessian equals jacfwd(jacfwd) (PyTorch's tutorial checks both with allclose)."""
    rng = np.random.default_rng(0)
    w, b = (
        dt.tensor(rng.normal(size=(33, 31)), dtype=dt.float32),
        dt.tensor(rng.normal(size=33), dtype=dt.float32),
    )
    x = dt.tensor(rng.normal(size=(64, 31)), dtype=dt.float32)

    def predict(weight, bias, v):
        return dt.nn.functional.linear(v, weight, bias).tanh()

    j0 = dt.func.vmap(dt.func.jacrev(predict, argnums=2), in_dims=(None, None, 0))(w, b, x)
    j1 = dt.func.jacrev(lambda *a: predict(*a).sum(0), argnums=2)(w, b, x).movedim(1, 0)
    assert dt.equal(j0, j1)
    h = dt.func.hessian(predict, argnums=2)(w, b, x[0])
    assert dt.allclose(h, dt.func.jacfwd(dt.func.jacfwd(predict, argnums=2), argnums=2)(w, b, x[0]))


def test_batched_boolean_masks_raise_as_pytorch_and_unbatched_ones_select():
    x = dt.tensor(np.abs(X) + 0.1)  # every sample selects the same count: refused all the same
    for f in (
        lambda r: r[r > 0],
        lambda r: r.clone().__setitem__(r > 0, 0.0),
        lambda r: r.sum(-1)[r[:, 0] > 0],
    ):
        with pytest.raises(RuntimeError, match="Attempting to batch over indexing with a boolean mask"):
            dt.func.vmap(f)(x)
    with pytest.raises(RuntimeError, match=r"Attempted to vmap over `mask` in torch.masked_select"):
        dt.func.vmap(lambda r: dt.masked_select(r, r > 0))(x)
    with pytest.raises(RuntimeError, match="Attempted to vmap over aten::nonzero"):
        dt.func.vmap(lambda r: r.nonzero())(x)
    mask = dt.tensor(X[0] > 0)
    got = dt.func.vmap(lambda r: r[mask] * 2 + dt.masked_select(r, mask))(dt.tensor(X))
    np.testing.assert_array_equal(got.numpy(), np.stack([r[X[0] > 0] * 3 for r in X]))
