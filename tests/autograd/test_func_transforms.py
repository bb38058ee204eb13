"""torch.func's derivative transforms: jacrev, jacfwd, hessian, vjp, jvp, linearize (values,
pytrees, argnums, has_aux, composition, errors), against closed forms and PyTorch."""

import numpy as np
import pytest

import disttorch as dt
from disttorch import func

RNG = np.random.default_rng(20)
A = RNG.normal(size=(3, 4))
B = RNG.normal(size=4)


def _close(a, b):
    if isinstance(b, dict):
        assert a.keys() == b.keys()
        for k in b:
            _close(a[k], b[k])
    elif isinstance(b, (tuple, list)):
        assert type(a) is type(b) or (isinstance(a, tuple) and isinstance(b, tuple)), (type(a), type(b))
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
    else:
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), np.asarray(b.detach().numpy()), rtol=1e-7, atol=1e-10)


def _tree(lib):
    def f(x, y):
        return {"a": (x @ y).tanh(), "b": [x.sin().sum(0) * y]}

    return f


# ------------------------------------------------------------------ closed forms (no PyTorch needed)


@pytest.mark.parametrize("transform", [func.jacrev, func.jacfwd])
def test_jacobian_of_elementwise_function_is_diagonal(transform):
    x = dt.tensor(B)
    j = transform(lambda t: t.exp())(x)
    np.testing.assert_allclose(j.numpy(), np.diag(np.exp(B)))
    assert not j.requires_grad


@pytest.mark.parametrize("transform", [func.jacrev, func.jacfwd])
def test_jacobian_of_matrix_product_and_argnums_tuple(transform):
    x, y = dt.tensor(A), dt.tensor(B)
    jx, jy = transform(lambda a, b: a @ b, argnums=(0, 1))(x, y)
    assert jx.shape == (3, 3, 4) and jy.shape == (3, 4)
    np.testing.assert_allclose(jy.numpy(), A)
    expected = np.einsum("ij,k->ijk", np.eye(3), B)
    np.testing.assert_allclose(jx.numpy(), expected)


def test_jacobian_of_independent_output_is_zero():
    x, y = dt.tensor(A), dt.tensor(B)
    j = func.jacrev(lambda a, b: b * 2, argnums=0)(x, y)
    assert j.shape == (4, 3, 4) and not j.numpy().any()
    jf = func.jacfwd(lambda a, b: b * 2, argnums=0)(x, y)
    assert jf.shape == (4, 3, 4) and not jf.numpy().any()


def test_hessian_of_quadratic_form():
    m = RNG.normal(size=(4, 4))
    q = dt.tensor(m)
    h = func.hessian(lambda x: x @ q @ x)(dt.tensor(B))
    np.testing.assert_allclose(h.numpy(), m + m.T, atol=1e-12)


def test_jvp_vjp_linearize_closed_form():
    x, v = dt.tensor(B), dt.tensor(np.ones(4))
    out, jv = func.jvp(lambda t: t**2, (x,), (v,))
    np.testing.assert_allclose(out.numpy(), B**2)
    np.testing.assert_allclose(jv.numpy(), 2 * B)
    out, fn = func.vjp(lambda t: t**3, x)
    (g,) = fn(dt.ones(4, dtype=dt.float64))
    np.testing.assert_allclose(g.numpy(), 3 * B**2)
    (g2,) = fn(dt.ones(4, dtype=dt.float64) * 2)  # vjp_fn can be called again
    np.testing.assert_allclose(g2.numpy(), 6 * B**2)
    out, lin = func.linearize(lambda t: t.sin(), x)
    np.testing.assert_allclose(lin(v).numpy(), np.cos(B))
    np.testing.assert_allclose(lin(v * 3).numpy(), 3 * np.cos(B))


def test_has_aux_returns_aux_and_jacobian():
    x = dt.tensor(B)
    j, aux = func.jacrev(lambda t: (t * 3, {"s": t.sum()}), has_aux=True)(x)
    np.testing.assert_allclose(j.numpy(), 3 * np.eye(4))
    assert float(aux["s"]) == pytest.approx(B.sum())
    out, jv, aux = func.jvp(lambda t: (t * 3, "tag"), (x,), (x,), has_aux=True)
    assert aux == "tag"
    np.testing.assert_allclose(jv.numpy(), 3 * B)
    out, fn, aux = func.vjp(lambda t: (t * 3, t.mean()), x, has_aux=True)
    assert float(aux) == pytest.approx(B.mean())


def test_grad_of_grad_and_grad_with_pytree_argument():
    x = dt.tensor(B)
    second = func.grad(lambda t: func.grad(lambda u: (u**3).sum())(t).sum())(x)
    np.testing.assert_allclose(second.numpy(), 6 * B)
    g = func.grad(lambda p: (p["w"] * p["b"]).sum())({"w": x, "b": x * 2})
    np.testing.assert_allclose(g["w"].numpy(), 2 * B)
    np.testing.assert_allclose(g["b"].numpy(), B)


def test_vmap_of_jacrev_gives_per_sample_jacobians():
    x = dt.tensor(A)
    j = func.vmap(func.jacrev(lambda r: r.exp() * 2))(x)
    assert j.shape == (3, 4, 4)
    for i in range(3):
        np.testing.assert_allclose(j[i].numpy(), np.diag(2 * np.exp(A[i])))


def test_result_is_differentiable_when_inputs_require_grad():
    x = dt.tensor(B, requires_grad=True)
    j = func.jacrev(lambda t: t**3)(x)
    assert j.requires_grad
    j.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * B)


def test_transform_results_pass_gradcheck():
    x = dt.tensor(B[:3], requires_grad=True)
    assert dt.autograd.gradcheck(lambda t: func.jacrev(lambda u: u.sin() * u.sum())(t), (x,))
    assert dt.autograd.gradcheck(lambda t: func.jacfwd(lambda u: u.exp() * u.prod())(t), (x,))
    v = dt.tensor(B[:3] + 1)
    assert dt.autograd.gradcheck(lambda t: func.jvp(lambda u: u.tanh() * u, (t,), (v,))[1], (x,))


def test_errors_name_what_was_wrong():
    x = dt.tensor(B)
    with pytest.raises(RuntimeError, match="only 1 positional inputs"):
        func.jacrev(lambda t: t, argnums=2)(x)
    with pytest.raises(RuntimeError, match="argnums must be non-empty"):
        func.jacfwd(lambda t: t, argnums=())(x)
    with pytest.raises(RuntimeError, match="floating point"):
        func.jacrev(lambda t: t)(dt.tensor([1, 2]))
    with pytest.raises(ValueError, match="chunk_size"):
        func.jacrev(lambda t: t, chunk_size=0)
    with pytest.raises(RuntimeError, match="randomness"):
        func.jacfwd(lambda t: t, randomness="maybe")
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        func.jvp(lambda t: t, x, x)
    with pytest.raises(RuntimeError, match="same python structure"):
        func.jvp(lambda t: t, (x,), (x, x))
    with pytest.raises(RuntimeError, match="output of function f should be a tuple"):
        func.jacrev(lambda t: t, has_aux=True)(x)
    _, fn = func.vjp(lambda t: (t, t), x)
    with pytest.raises(RuntimeError, match="pytree structure of cotangents"):
        fn(x)
    with pytest.raises(RuntimeError, match="return only tensors"):
        func.jacrev(lambda t: [t, 3])(x)


# ------------------------------------------------------------------ parity with PyTorch


@pytest.mark.parity
@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1,)])
def test_jacobians_match_pytorch_on_pytrees(torch, name, argnums):
    ours = getattr(func, name)(_tree(dt), argnums=argnums)(dt.tensor(A), dt.tensor(B))
    theirs = getattr(torch.func, name)(_tree(torch), argnums=argnums)(torch.tensor(A), torch.tensor(B))
    _close(ours, theirs)


@pytest.mark.parity
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_hessian_matches_pytorch(torch, argnums):
    def s(x, y):
        return (x.sin() @ y).pow(2).sum() + (x * x).sum() * y.prod()

    _close(
        func.hessian(s, argnums)(dt.tensor(A), dt.tensor(B)),
        torch.func.hessian(s, argnums)(torch.tensor(A), torch.tensor(B)),
    )


@pytest.mark.parity
def test_jvp_vjp_linearize_match_pytorch(torch):
    v, w = RNG.normal(size=(3, 4)), RNG.normal(size=4)
    d = (dt.tensor(A), dt.tensor(B))
    t = (torch.tensor(A), torch.tensor(B))
    _close(
        func.jvp(_tree(dt), d, (dt.tensor(v), dt.tensor(w))),
        torch.func.jvp(_tree(torch), t, (torch.tensor(v), torch.tensor(w))),
    )
    ct = {"a": RNG.normal(size=3), "b": [RNG.normal(size=4)]}
    out, fn = func.vjp(_tree(dt), *d)
    tout, tfn = torch.func.vjp(_tree(torch), *t)
    _close(out, tout)
    _close(
        fn({"a": dt.tensor(ct["a"]), "b": [dt.tensor(ct["b"][0])]}),
        tfn({"a": torch.tensor(ct["a"]), "b": [torch.tensor(ct["b"][0])]}),
    )
    out, lin = func.linearize(_tree(dt), *d)
    tout, tlin = torch.func.linearize(_tree(torch), *t)
    _close(lin(dt.tensor(v), dt.tensor(w)), tlin(torch.tensor(v), torch.tensor(w)))


@pytest.mark.parity
def test_compositions_match_pytorch(torch):
    def f(r):
        return r.exp() * r.sum()

    _close(func.vmap(func.jacrev(f))(dt.tensor(A)), torch.func.vmap(torch.func.jacrev(f))(torch.tensor(A)))
    _close(
        func.jacrev(func.jacfwd(f))(dt.tensor(B)), torch.func.jacrev(torch.func.jacfwd(f))(torch.tensor(B))
    )

    def g(u):
        return func.jvp(f, (u,), (u.cos(),))[1].sum()

    def tg(u):
        return torch.func.jvp(f, (u,), (u.cos(),))[1].sum()

    _close(func.grad(g)(dt.tensor(B)), torch.func.grad(tg)(torch.tensor(B)))


@pytest.mark.parity
def test_float32_tanh_jacobians_round_as_pytorch_kernel(torch):
    """jacfwd records tanh's backward (double backward): its ``1 - y*y`` is rounded once, as
    PyTorch's ``tanh_backward`` (a fused multiply-add), so jacfwd agrees with jacrev and with
    PyTorch's kernel where ``y`` is near +-1 (the difference is then far beyond ``allclose``'s)."""
    x = dt.tensor(np.random.default_rng(4).uniform(-5, 5, size=32).astype(np.float32))
    fwd, rev = func.jacfwd(dt.tanh)(x), func.jacrev(dt.tanh)(x)
    np.testing.assert_array_equal(fwd.numpy(), rev.numpy())
    y = torch.tensor(dt.tanh(x).numpy())
    np.testing.assert_array_equal(
        fwd.diagonal().numpy(), torch.ops.aten.tanh_backward(torch.ones(32), y).numpy()
    )
    x64 = dt.tensor(x.numpy().astype(np.float64), requires_grad=True)
    assert dt.autograd.gradcheck(lambda v: func.jacfwd(dt.tanh)(v).sum(), (x64,))


@pytest.mark.parity
def test_jacrev_of_functional_call_matches_pytorch(torch):
    lin = dt.nn.Linear(4, 2).double()
    tlin = torch.nn.Linear(4, 2).double()
    params = {k: dt.tensor(RNG.normal(size=tuple(p.shape))) for k, p in lin.named_parameters()}
    tparams = {k: torch.tensor(v.numpy()) for k, v in params.items()}
    x = RNG.normal(size=(5, 4))
    ours = func.jacrev(lambda p: func.functional_call(lin, p, (dt.tensor(x),)))(params)
    theirs = torch.func.jacrev(lambda p: torch.func.functional_call(tlin, p, (torch.tensor(x),)))(tparams)
    _close(ours, theirs)


# ------------------------------------------------------------------ module helpers and the namespace


def test_stack_module_state_builds_an_ensemble_for_vmap():
    models = [dt.nn.Linear(3, 2) for _ in range(4)]
    params, buffers = func.stack_module_state(models)
    assert params["weight"].shape == (4, 2, 3) and params["weight"].is_leaf and params["weight"].requires_grad
    x = dt.randn(5, 3)
    out = func.vmap(lambda p, b: func.functional_call(models[0], (p, b), (x,)))(params, buffers)
    for i, m in enumerate(models):
        np.testing.assert_allclose(out[i].detach().numpy(), m(x).detach().numpy(), rtol=1e-6, atol=1e-7)
    with pytest.raises(RuntimeError, match="at least one model"):
        func.stack_module_state([])
    with pytest.raises(RuntimeError, match="same class"):
        func.stack_module_state([dt.nn.Linear(3, 2), dt.nn.Tanh()])


def test_replace_batch_norm_functionalize_debug_unwrap():
    net = dt.nn.Sequential(dt.nn.Linear(3, 3), dt.nn.BatchNorm1d(3))
    assert func.replace_all_batch_norm_modules_(net) is net
    assert net[1].running_mean is None and not net[1].track_running_stats
    x = dt.randn(4, 3)
    assert net(x).shape == (4, 3)

    def f(t):
        y = t.clone()
        y.add_(1)
        return y

    np.testing.assert_allclose(func.functionalize(f)(x).numpy(), x.numpy() + 1)
    with pytest.raises(RuntimeError, match="invalid argument for remove"):
        func.functionalize(f, remove="all")
    assert func.debug_unwrap(x) is x


@pytest.mark.parity
def test_every_public_name_of_torch_func_and_autograd_functional_exists(torch):
    import torch.autograd.forward_ad  # noqa: F401
    import torch.autograd.functional  # noqa: F401

    missing = [n for n in torch.func.__all__ if not hasattr(func, n) and n != "rearrange"]
    missing += [n for n in torch.autograd.functional.__all__ if not hasattr(dt.autograd.functional, n)]
    missing += [n for n in torch.autograd.forward_ad.__all__ if not hasattr(dt.autograd.forward_ad, n)]
    assert not missing, missing


# ------------------------------------------------------------------ through fused NumPy backwards


def test_autograd_grad_of_two_outputs_of_one_node():
    x = dt.tensor(A, requires_grad=True)
    q, r = dt.linalg.qr(x)
    (g,) = dt.autograd.grad([q, r], x, [dt.ones_like(q), dt.ones_like(r)])
    (gq,) = dt.autograd.grad(q, x, dt.ones_like(q), retain_graph=True)
    q2, r2 = dt.linalg.qr(x)
    (gr,) = dt.autograd.grad(r2, x, dt.ones_like(r2))
    np.testing.assert_allclose(g.numpy(), gq.numpy() + gr.numpy(), atol=1e-12)


def test_forward_mode_and_second_order_through_convolution():
    x = dt.tensor(RNG.normal(size=(1, 2, 5, 5)))
    w = dt.tensor(RNG.normal(size=(3, 2, 3, 3)))
    b = dt.tensor(RNG.normal(size=3))
    tx, tw, tb = (dt.tensor(RNG.normal(size=tuple(t.shape))) for t in (x, w, b))
    F = dt.nn.functional
    _, jv = func.jvp(lambda a, c, d: F.conv2d(a, c, d, padding=1), (x, w, b), (tx, tw, tb))
    expected = F.conv2d(tx, w, padding=1) + F.conv2d(x, tw, padding=1) + tb.reshape(-1, 1, 1)
    np.testing.assert_allclose(jv.numpy(), expected.numpy(), atol=1e-12)
    wt = dt.tensor(RNG.normal(size=(2, 4, 3, 3)))
    _, jv = func.jvp(lambda a: F.conv_transpose2d(a, wt, stride=2), (x,), (tx,))
    np.testing.assert_allclose(jv.numpy(), F.conv_transpose2d(tx, wt, stride=2).numpy(), atol=1e-12)
    # a true second order: the Hessian of |conv(a)|^2 is 2 J^T J
    hess = func.hessian(lambda a: F.conv2d(a, w).pow(2).sum())(x).reshape(x.numel(), x.numel())
    jac = func.jacrev(lambda a: F.conv2d(a, w).flatten())(x).reshape(-1, x.numel())
    np.testing.assert_allclose(hess.numpy(), 2 * jac.numpy().T @ jac.numpy(), atol=1e-10)


@pytest.mark.parity
def test_jvp_and_jacfwd_through_fused_layers_match_pytorch(torch):
    x = RNG.normal(size=(2, 3, 6, 6))
    tx = RNG.normal(size=x.shape)
    w = RNG.normal(size=(4, 3, 3, 3))
    wt = RNG.normal(size=(3, 2, 3, 3))

    def net(lib, F):
        def f(a, c):
            h = F.conv2d(a, c, stride=2, padding=1).tanh()
            return F.conv_transpose2d(a, lib.tensor(wt), stride=2).sum() + h

        return f

    ours = func.jvp(
        net(dt, dt.nn.functional), (dt.tensor(x), dt.tensor(w)), (dt.tensor(tx), dt.tensor(w * 0.5))
    )
    theirs = torch.func.jvp(
        net(torch, torch.nn.functional),
        (torch.tensor(x), torch.tensor(w)),
        (torch.tensor(tx), torch.tensor(w * 0.5)),
    )
    _close(ours, theirs)
    xs = RNG.normal(size=(1, 2, 4, 4))
    ws = RNG.normal(size=(2, 2, 3, 3))
    _close(
        func.jacfwd(lambda a: dt.nn.functional.conv2d(a, dt.tensor(ws)))(dt.tensor(xs)),
        torch.func.jacfwd(lambda a: torch.nn.functional.conv2d(a, torch.tensor(ws)))(torch.tensor(xs)),
    )


@pytest.mark.parity
@pytest.mark.parametrize("layer", ["layer_norm", "group_norm", "batch_norm_train", "batch_norm_eval"])
def test_jvp_through_normalisation_layers_matches_pytorch(torch, layer):
    x, t = RNG.normal(size=(4, 6, 5)), RNG.normal(size=(4, 6, 5))
    w, b, tw, tb = (RNG.normal(size=6) for _ in range(4))
    rm, rv = RNG.normal(size=6), RNG.uniform(0.5, 2, size=6)

    def make(lib):
        F = lib.nn.functional
        return {
            "layer_norm": lambda a, c, d: F.layer_norm(a, (5,), c[:5], d[:5]),
            "group_norm": lambda a, c, d: F.group_norm(a, 3, c, d),
            "batch_norm_train": lambda a, c, d: F.batch_norm(a, None, None, c, d, training=True),
            "batch_norm_eval": lambda a, c, d: F.batch_norm(a, lib.tensor(rm), lib.tensor(rv), c, d),
        }[layer]

    ours = func.jvp(make(dt), tuple(map(dt.tensor, (x, w, b))), tuple(map(dt.tensor, (t, tw, tb))))
    theirs = torch.func.jvp(
        make(torch), tuple(map(torch.tensor, (x, w, b))), tuple(map(torch.tensor, (t, tw, tb)))
    )
    _close(ours, theirs)


@pytest.mark.parity
@pytest.mark.parametrize(
    "pool",
    [
        "max_pool2d",
        "max_pool2d_padded",
        "max_pool1d_unbatched",
        "avg_pool2d",
        "adaptive_avg_pool2d",
        "adaptive_max_pool2d",
    ],
)
def test_jvp_through_pooling_matches_pytorch(torch, pool):
    x, t = RNG.normal(size=(2, 3, 7, 8)), RNG.normal(size=(2, 3, 7, 8))

    def make(lib):
        F = lib.nn.functional
        return {
            "max_pool2d": lambda a: F.max_pool2d(a, 2),
            "max_pool2d_padded": lambda a: F.max_pool2d(a, 3, stride=2, padding=1),
            "max_pool1d_unbatched": lambda a: F.max_pool1d(a[0], 3),
            "avg_pool2d": lambda a: F.avg_pool2d(a, 3, stride=2, padding=1, count_include_pad=False),
            "adaptive_avg_pool2d": lambda a: F.adaptive_avg_pool2d(a, (3, 5)),
            "adaptive_max_pool2d": lambda a: F.adaptive_max_pool2d(a, (3, 5)),
        }[pool]

    _close(
        func.jvp(make(dt), (dt.tensor(x),), (dt.tensor(t),)),
        torch.func.jvp(make(torch), (torch.tensor(x),), (torch.tensor(t),)),
    )


@pytest.mark.parity
def test_hessian_through_max_pool_matches_pytorch(torch):
    x = RNG.normal(size=(1, 1, 4, 4))

    def f(lib):
        return lambda a: (lib.nn.functional.max_pool2d(a, 2) ** 3).sum()

    _close(func.hessian(f(dt))(dt.tensor(x)), torch.func.hessian(f(torch))(torch.tensor(x)))


@pytest.mark.parity
@pytest.mark.parametrize("mask", ["none", "causal", "float", "bool"])
def test_jvp_through_attention_matches_pytorch(torch, mask):
    q, k, v = RNG.normal(size=(2, 2, 5, 4)), RNG.normal(size=(2, 2, 6, 4)), RNG.normal(size=(2, 2, 6, 3))
    tq, tk, tv = (RNG.normal(size=a.shape) for a in (q, k, v))
    fmask = RNG.normal(size=(5, 6))
    bmask = RNG.random((5, 6)) > 0.3
    bmask[:, 0] = True

    def make(lib):
        sdpa = lib.nn.functional.scaled_dot_product_attention
        kw = {
            "none": {},
            "causal": {"is_causal": True},
            "float": {"attn_mask": lib.tensor(fmask)},
            "bool": {"attn_mask": lib.tensor(bmask), "scale": 0.3},
        }[mask]
        return lambda a, b, c: sdpa(a, b, c, **kw)

    ours = func.jvp(make(dt), tuple(map(dt.tensor, (q, k, v))), tuple(map(dt.tensor, (tq, tk, tv))))
    theirs = torch.func.jvp(
        make(torch), tuple(map(torch.tensor, (q, k, v))), tuple(map(torch.tensor, (tq, tk, tv)))
    )
    _close(ours, theirs)
    # the jvp stays differentiable w.r.t. the primals (its rule is built from tensor ops)
    x = dt.tensor(q, requires_grad=True)
    tx = torch.tensor(q, requires_grad=True)
    func.jvp(lambda a: make(dt)(a, dt.tensor(k), dt.tensor(v)), (x,), (dt.tensor(tq),))[1].pow(
        2
    ).sum().backward()
    torch.func.jvp(lambda a: make(torch)(a, torch.tensor(k), torch.tensor(v)), (tx,), (torch.tensor(tq),))[
        1
    ].pow(2).sum().backward()
    _close(x.grad, tx.grad)


def test_jvp_through_multihead_attention_equals_the_jacobian_product():
    m = dt.nn.MultiheadAttention(4, 2, batch_first=True).double()
    x, t = RNG.normal(size=(2, 5, 4)), RNG.normal(size=(2, 5, 4))

    def f(a):  # with its weights, attention takes the math path (flash has no forward rule)
        return m(a, a, a, need_weights=True)[0]

    _, jv = func.jvp(f, (dt.tensor(x),), (dt.tensor(t),))
    jac = func.jacrev(f)(dt.tensor(x))
    np.testing.assert_allclose(jv.numpy(), np.einsum("abcdef,def->abc", jac.numpy(), t), atol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize(
    "op",
    ["inv", "det", "slogdet", "solve", "solve_right", "solve_triangular", "cholesky", "eigh", "matrix_exp"],
)
def test_jvp_through_linalg_decompositions_matches_pytorch(torch, op):
    a = RNG.normal(size=(2, 3, 3)) + 3 * np.eye(3)
    t = RNG.normal(size=(2, 3, 3))
    b = RNG.normal(size=(2, 3, 2))
    if op in ("cholesky", "eigh"):
        a, t = a @ a.swapaxes(-1, -2), t + t.swapaxes(-1, -2)

    def make(lib):
        la = lib.linalg
        return {
            "inv": lambda x: la.inv(x),
            "det": lambda x: la.det(x),
            "slogdet": lambda x: la.slogdet(x)[1],
            "solve": lambda x: la.solve(x, lib.tensor(b)),
            "solve_right": lambda x: la.solve(x, lib.tensor(b).mT, left=False),
            "solve_triangular": lambda x: la.solve_triangular(x.triu(), lib.tensor(b), upper=True),
            "cholesky": lambda x: la.cholesky(x, upper=True),
            "eigh": lambda x: (la.eigh(x)[0], la.eigh(x)[1].abs()),
            "matrix_exp": lambda x: la.matrix_exp(x * 0.3),
        }[op]

    _close(
        func.jvp(make(dt), (dt.tensor(a),), (dt.tensor(t),)),
        torch.func.jvp(make(torch), (torch.tensor(a),), (torch.tensor(t),)),
    )


def test_hessians_through_decompositions_are_the_derivatives_of_their_gradients():
    a = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
    for f in (dt.linalg.det, lambda x: dt.linalg.svdvals(x).sum()):
        h = func.hessian(f)(dt.tensor(a)).numpy().reshape(9, 9)
        eps, numeric = 1e-6, []
        for i in range(9):
            step = np.eye(9)[i].reshape(3, 3) * eps
            up, down = (func.grad(f)(dt.tensor(a + d)).numpy().reshape(9) for d in (step, -step))
            numeric.append((up - down) / (2 * eps))
        np.testing.assert_allclose(h, np.array(numeric).T, rtol=1e-5, atol=1e-7)


@pytest.mark.parity
@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (2, 4, 3)])
def test_jvp_through_svd_qr_pinv_lstsq_matches_pytorch(torch, shape):
    a, t = RNG.normal(size=shape), RNG.normal(size=shape)

    def svd(lib):
        def f(x):
            u, s, vh = lib.linalg.svd(x, full_matrices=False)
            sign = lib.sign(u[..., :1, :])  # the same sign convention in both libraries
            return u * sign, s, vh * sign.mT

        return f

    def others(lib):
        def f(x):
            out = [lib.linalg.pinv(x), lib.linalg.matrix_norm(x, "nuc")]
            if shape[-2] >= shape[-1]:
                out += list(lib.linalg.qr(x))
                out.append(lib.linalg.lstsq(x, lib.tensor(np.ones(shape[:-1] + (2,)))).solution)
            return tuple(out)

        return f

    for make in (svd, others):
        _close(
            func.jvp(make(dt), (dt.tensor(a),), (dt.tensor(t),)),
            torch.func.jvp(make(torch), (torch.tensor(a),), (torch.tensor(t),)),
        )


@pytest.mark.parity
def test_hessian_of_two_norms_matches_pytorch(torch):
    a = RNG.normal(size=(3, 4))
    for f in (
        lambda lib, x: lib.linalg.matrix_norm(x),
        lambda lib, x: lib.linalg.norm(x),
        lambda lib, x: lib.linalg.vector_norm(x, dim=1),
    ):
        _close(
            func.hessian(lambda x: f(dt, x).sum())(dt.tensor(a)),
            torch.func.hessian(lambda x: f(torch, x).sum())(torch.tensor(a)),
        )


def test_vmap_stacks_dict_and_nested_outputs_with_prefix_out_dims():
    x = dt.tensor(A)
    out = func.vmap(lambda r: {"s": r.sum(), "p": [r * 2, (r.exp(),)]}, out_dims={"s": 0, "p": 1})(x)
    np.testing.assert_allclose(out["s"].numpy(), A.sum(1))
    np.testing.assert_allclose(out["p"][0].numpy(), (A * 2).T)
    np.testing.assert_allclose(out["p"][1][0].numpy(), np.exp(A).T)
    const = dt.tensor(B)
    assert func.vmap(lambda r: (r.sum(), const), out_dims=(0, None))(x)[1] is const
    with pytest.raises(ValueError, match="not compatible with the structure"):
        func.vmap(lambda r: (r, r), out_dims=(0, 0, 0))(x)
    with pytest.raises(ValueError, match="must only return Tensors"):
        func.vmap(lambda r: {"n": 1.0})(x)


@pytest.mark.parity
def test_vmap_of_grad_gives_per_sample_gradients_of_a_module_as_pytorch(torch):
    def run(lib, mod):
        lib.manual_seed(0)
        model = mod.Sequential(mod.Linear(4, 3), mod.Tanh(), mod.Linear(3, 2)).double()
        params = {k: v.detach() for k, v in model.named_parameters()}
        data, target = lib.tensor(A), lib.tensor([0, 1, 1])

        def loss(p, x, t):
            out = lib.func.functional_call(model, p, (x.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, t.unsqueeze(0))

        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, data, target)

    _close(run(dt, dt.nn), run(torch, torch.nn))


def _strict_calls(torch) -> list:
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(2, 2, bias=False)
            self.b = torch.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    call = torch.func.functional_call
    lin, x = torch.nn.Linear(2, 2), torch.ones(2)
    got = []
    for params, kw in (
        ({"weight": torch.zeros(2, 2)}, {}),
        ({"weight": torch.zeros(2, 2), "bias": torch.zeros(2), "junk": torch.zeros(1)}, {}),
        ({"weight": torch.zeros(2, 2), "junk": torch.zeros(1)}, {}),
    ):
        try:
            call(lin, params, (x,), strict=True, **kw)
        except RuntimeError as e:
            got.append(str(e))
    got.append(call(Tied(), {"a.weight": torch.eye(2) * 2}, (x,), strict=True).tolist())  # the tie fills b
    return got


def test_functional_call_strict_messages_and_ties():
    assert _strict_calls(dt) == [
        "Error(s) in reparametrizing for Linear:\n\tMissing key(s): 'bias'.",
        "Error(s) in reparametrizing for Linear:\n\tUnexpected key(s): 'junk'.",
        "Error(s) in reparametrizing for Linear:\n\tUnexpected key(s): 'junk'.\n\tMissing key(s): 'bias'.",
        [4.0, 4.0],
    ]


@pytest.mark.parity
def test_functional_call_strict_as_pytorch(torch):
    assert _strict_calls(dt) == _strict_calls(torch)
