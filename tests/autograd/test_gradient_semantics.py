"""Gradient semantics compared with PyTorch's (found by fuzzing transforms and higher-order
gradients): variances without degrees of freedom, p-norms (one implementation for
``Tensor.norm`` and ``linalg.vector_norm``), ..."""

import math

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck, gradgradcheck

rng = np.random.default_rng(11)


def _grad(T, f, x, create_graph=False):
    (g,) = T.autograd.grad(f(x), x, create_graph=create_graph)
    return g


@pytest.mark.parametrize("fn", ["var", "std"])
@pytest.mark.parametrize("correction", [3, 4])
def test_variance_without_degrees_of_freedom_is_a_function_of_the_gradient(fn, correction):
    x = dt.tensor([1.0, 3.0, -2.0], dtype=dt.float64, requires_grad=True)
    g = _grad(dt, lambda v: getattr(v, fn)(correction=correction), x, create_graph=True)
    # var: grad * inf everywhere (not the sign of x - mean); std: 0 * inf
    expected = [math.inf] * 3 if fn == "var" else [math.nan] * 3
    np.testing.assert_array_equal(g.detach().numpy(), expected)
    assert g.requires_grad == (fn == "std")  # (std's divides by the result) var's Hessian is 0, not NaN
    h = dt.func.hessian(lambda v: v.var(correction=correction))(x.detach())
    np.testing.assert_array_equal(h.numpy(), np.zeros((3, 3)))
    # over a dim, PyTorch's general formula: (2 / (n - correction)) * grad * (x - mean)
    g = _grad(dt, lambda v: v.var(dim=0, correction=correction), x)
    np.testing.assert_array_equal(g.numpy(), [math.inf, math.inf, -math.inf])


def test_variance_without_degrees_of_freedom_as_pytorch(torch):
    base = np.array([[1.0, 3.0, -2.0], [2.0, 2.0, 2.0]])
    for fn, c, dim in [
        ("var", 6, None),
        ("var", 7, None),
        ("std", 6, None),
        ("var", 3, 1),
        ("var", 6, (0, 1)),
    ]:
        out = []
        for T in (torch, dt):
            x = T.tensor(base, requires_grad=True)
            (g,) = T.autograd.grad(getattr(x, fn)(dim=dim, correction=c).sum(), x, create_graph=True)
            h = T.func.hessian(lambda v, T=T: getattr(v, fn)(dim=dim, correction=c).sum())(x.detach())
            out.append((g.detach().numpy(), g.requires_grad, h.numpy()))
        np.testing.assert_array_equal(out[0][0], out[1][0])
        assert out[0][1] == out[1][1]
        np.testing.assert_array_equal(out[0][2], out[1][2])


NORM_ORDS = [2, 1, 3, 0.5, -1, -2, -0.5, math.inf, -math.inf, 1.5]


@pytest.mark.parametrize("ord", NORM_ORDS)
def test_vector_norm_is_tensor_norm(ord):
    """One implementation: the same values, gradients and node for both spellings."""
    base = rng.standard_normal((3, 4))
    base[0, 1], base[2] = 0, 0
    for dim in (None, 1, (0, 1)):
        results = []
        for f in (lambda x: dt.linalg.vector_norm(x, ord, dim), lambda x: x.norm(ord, dim)):
            x = dt.tensor(base, requires_grad=True)
            y = f(x)
            (g,) = dt.autograd.grad(y.sum(), x)
            results.append((y.detach().numpy(), g.numpy(), y.grad_fn.name()))
        np.testing.assert_array_equal(results[0][0], results[1][0])
        np.testing.assert_array_equal(results[0][1], results[1][1])
        assert results[0][2] == results[1][2] == "LinalgVectorNormBackward0"


@pytest.mark.parametrize("ord", [-1, -2, -0.5])
def test_negative_order_norm_gradient_is_zero_at_zero_entries(ord):
    x = dt.tensor([[0.0, 1.0, -2.0], [0.5, 0.25, 3.0]], dtype=dt.float64, requires_grad=True)
    g = _grad(dt, lambda v: dt.linalg.vector_norm(v, ord, dim=1).sum(), x)
    assert np.isfinite(g.numpy()).all()
    np.testing.assert_array_equal(g.numpy()[0], [0.0, 0.0, 0.0])  # the norm of a row with a 0 is 0
    away = dt.tensor([[0.5, 1.0, -2.0]], dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda v: dt.linalg.vector_norm(v, ord, dim=1), (away,))
    assert gradgradcheck(lambda v: dt.linalg.vector_norm(v, ord, dim=1), (away,))


def test_norm_zero_order_passes_no_gradient():
    x = dt.tensor([[0.0, 1.0], [2.0, 0.0]], requires_grad=True)
    for y in (x.norm(0), dt.norm(x, 0, 1), dt.linalg.vector_norm(x, 0)):
        assert y.requires_grad
        y.sum().backward()
        assert x.grad is None


def test_norms_as_pytorch(torch):
    base = rng.standard_normal((3, 4))
    base[0, 1], base[2] = 0, 0
    for ord in NORM_ORDS + [0]:
        for name in ("vector_norm", "norm"):
            out = []
            for T in (torch, dt):
                x = T.tensor(base, requires_grad=True)
                y = T.linalg.vector_norm(x, ord, 1) if name == "vector_norm" else x.norm(ord, 1)
                (g,) = T.autograd.grad(y, x, T.ones_like(y), allow_unused=True)
                out.append((y.detach().numpy(), None if g is None else g.numpy()))
            np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-12)
            if out[0][1] is None:
                assert out[1][1] is None, (ord, name)
            else:
                np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-12, err_msg=f"{ord} {name}")


Z = np.array([[0.3, -1.2, 2.0]])
Y = np.array([[1.0, 0.0, 0.5]])
W = np.array([0.7, 1.5, 2.0])
LOSS_WEIGHTS = {
    "bce_logits_weight": lambda T, w: T.nn.functional.binary_cross_entropy_with_logits(
        T.tensor(Z), T.tensor(Y), weight=w
    ),
    "bce_logits_pos_weight": lambda T, w: T.nn.functional.binary_cross_entropy_with_logits(
        T.tensor(Z), T.tensor(Y), pos_weight=w
    ),
    "bce_logits_both": lambda T, w: T.nn.functional.binary_cross_entropy_with_logits(
        T.tensor(Z), T.tensor(Y), weight=w, pos_weight=w * 2, reduction="sum"
    ),
    "bce_weight": lambda T, w: T.nn.functional.binary_cross_entropy(
        T.tensor(Z).sigmoid(), T.tensor(Y), weight=w
    ),
    "nll_weight": lambda T, w: T.nn.functional.nll_loss(T.tensor(Z), T.tensor([2]), weight=w),
    "cross_entropy_weight": lambda T, w: T.nn.functional.cross_entropy(T.tensor(Z), T.tensor([2]), weight=w),
    "soft_margin_target": lambda T, w: T.nn.functional.soft_margin_loss(T.tensor(Z), w[None]),
}


def _transform_results(T, f):
    out = []
    for transform in (T.func.grad, T.func.jacrev, T.func.jacfwd):
        try:
            out.append(transform(lambda w: f(T, w))(T.tensor(W)).numpy())
        except RuntimeError as e:
            out.append(str(e))
    return out


def test_logits_loss_weights_are_differentiable_under_func_transforms():
    """torch.func runs binary_cross_entropy_with_logits decomposed: its weight and pos_weight
    have gradients there (while eager autograd refuses them)."""
    for name in ("bce_logits_weight", "bce_logits_pos_weight", "bce_logits_both"):
        f = LOSS_WEIGHTS[name]
        w = dt.tensor(W, requires_grad=True)
        with pytest.raises(RuntimeError, match="is not differentiable with respect to argument"):
            f(dt, w)
        grads = _transform_results(dt, f)
        assert np.abs(grads[0]).sum() > 0
        for g in grads[1:]:
            np.testing.assert_allclose(g, grads[0], rtol=1e-12)
        eps, numeric = 1e-6, []
        for i in range(len(W)):
            step = np.eye(len(W))[i] * eps
            numeric.append(
                (f(dt, dt.tensor(W + step)).item() - f(dt, dt.tensor(W - step)).item()) / (2 * eps)
            )
        np.testing.assert_allclose(grads[0], numeric, rtol=1e-6)


def test_loss_weights_under_func_transforms_as_pytorch(torch):
    """Refused by the reverse transforms where PyTorch has no derivative, a zero tangent for the
    forward ones; the logits loss differentiable under all."""
    for name, f in LOSS_WEIGHTS.items():
        ref, got = _transform_results(torch, f), _transform_results(dt, f)
        for r, g in zip(ref, got):
            if isinstance(r, str):
                assert isinstance(g, str) and g.split(".")[0] == r.split(".")[0], (name, g)
            else:
                np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-15, err_msg=name)


WRITE_X = np.arange(6.0).reshape(2, 3) / 7
WRITE_SRC = np.array([[0.5, -1.0, 2.0], [3.0, 4.0, -5.0]])
WRITES = {  # writes at repeated positions
    "scatter": lambda T, x, s: x.scatter(0, T.tensor([[1, 1, 0], [1, 0, 0]]), s),
    "index_put": lambda T, x, s: x.index_put(
        (T.tensor([0, 0, 1, 0]), T.tensor([1, 1, 2, 1])), s.flatten()[:4]
    ),
    "setitem": lambda T, x, s: _set(x.clone(), T.tensor([1, 0, 1]), s[:, :3].repeat(2, 1)[:3]),
    "index_copy": lambda T, x, s: x.index_copy(1, T.tensor([2, 2, 0]), s),
    "put": lambda T, x, s: x.put(T.tensor([1, 1, 2, 1]), s.flatten()[:4]),
}


def _set(y, index, value):
    y[index] = value
    return y


def _write_derivatives(T, f):
    x, s = T.tensor(WRITE_X), T.tensor(WRITE_SRC)
    tx, ts = T.full((2, 3), 10.0, dtype=T.float64), T.arange(1.0, 7.0, dtype=T.float64).reshape(2, 3)
    forward = T.func.jvp(lambda a, b: f(T, a, b), (x, s), (tx, ts))[1]
    with T.autograd.forward_ad.dual_level():
        dual = f(T, T.autograd.forward_ad.make_dual(x, tx), T.autograd.forward_ad.make_dual(s, ts))
        eager = T.autograd.forward_ad.unpack_dual(dual).tangent
    u, sg = T.ones(2, 3, dtype=T.float64, requires_grad=True), s.clone().requires_grad_()
    (g,) = T.autograd.grad(f(T, x, sg), sg, u, create_graph=True)
    (reverse,) = T.autograd.grad(g, u, ts)  # reverse over reverse: the repeats summed
    # autograd.functional.jvp is that double-backward trick too, in PyTorch as here
    trick = T.autograd.functional.jvp(lambda a, b: f(T, a, b), (x, s), (tx, ts))[1]
    return forward.numpy(), eager.numpy(), reverse.numpy(), trick.numpy()


@pytest.mark.parametrize("name", list(WRITES))
def test_forward_ad_of_writes_at_repeated_positions_keeps_the_last(name):
    forward, eager, reverse, trick = _write_derivatives(dt, WRITES[name])
    np.testing.assert_array_equal(forward, eager)
    assert not np.array_equal(trick, forward)  # the double-backward trick sums the repeats
    tangents = dt.full((2, 3), 10.0, dtype=dt.float64), dt.tensor(np.arange(1.0, 7.0).reshape(2, 3))
    expected = WRITES[name](dt, *tangents)
    # linear: the tangent is the write of the tangents (= the finite difference), where the
    # reverse derivative gives every repeat the gradient of the position (PyTorch's)
    np.testing.assert_array_equal(forward, expected.numpy())


@pytest.mark.parametrize("name", list(WRITES))
def test_forward_ad_of_writes_as_pytorch(torch, name):
    for ours, theirs in zip(_write_derivatives(dt, WRITES[name]), _write_derivatives(torch, WRITES[name])):
        np.testing.assert_array_equal(ours, theirs)


_X4 = rng.standard_normal((2, 2, 4, 4))
_X2 = rng.standard_normal((3, 4))


def _F(T):
    return T.nn.functional


READS_INPUT = {  # (input, op, PyTorch's second derivative w.r.t. the input: 0, None or an error)
    "relu": (_X4, lambda T, x: T.relu(x), 0),
    "hardtanh": (_X4, lambda T, x: _F(T).hardtanh(x), 0),
    "leaky_relu": (_X4, lambda T, x: _F(T).leaky_relu(x, 0.1), 0),
    "threshold": (_X4, lambda T, x: _F(T).threshold(x, 0.1, 2.0), 0),
    "softshrink": (_X4, lambda T, x: _F(T).softshrink(x), 0),
    "abs": (_X4, lambda T, x: x.abs(), 0),
    "prelu": (_X4, lambda T, x: _F(T).prelu(x, T.tensor([0.25], dtype=x.dtype)), 0),
    "hardsigmoid": (_X4, lambda T, x: _F(T).hardsigmoid(x), "hardsigmoid_backward is not implemented"),
    "max_pool2d": (_X4, lambda T, x: _F(T).max_pool2d(x, 2), 0),
    "avg_pool2d": (_X4, lambda T, x: _F(T).avg_pool2d(x, 2), 0),
    "adaptive_max_pool2d": (_X4, lambda T, x: _F(T).adaptive_max_pool2d(x, 3), 0),
    "interpolate_area": (_X4, lambda T, x: _F(T).interpolate(x, size=2, mode="area"), 0),
    "pad_reflect": (_X4, lambda T, x: _F(T).pad(x, (1, 1, 1, 1), mode="reflect"), 0),
    "max_unpool2d": (
        _X4,
        lambda T, x: _F(T).max_unpool2d(*_F(T).max_pool2d(x, 2, return_indices=True), 2),
        0,
    ),
    "nll_loss": (_X2, lambda T, x: _F(T).nll_loss(x, T.tensor([0, 1, 3])), 0),
    "multi_margin_loss": (
        _X2,
        lambda T, x: _F(T).multi_margin_loss(x, T.tensor([0, 1, 3])),
        "multi_margin_loss_backward is not implemented",
    ),
    "norm_1": (_X2, lambda T, x: x.norm(1), 0),
    "conv2d": (_X4, lambda T, x: _F(T).conv2d(x, T.ones(1, 2, 2, 2, dtype=x.dtype)), None),
    # not read: the first gradient does not require grad
    "pad_constant": (_X4, lambda T, x: _F(T).pad(x, (1, 1, 1, 1)), False),
    "interpolate_bilinear": (_X4, lambda T, x: _F(T).interpolate(x, scale_factor=2, mode="bilinear"), False),
    "clamp": (_X4, lambda T, x: x.clamp(-0.5, 0.5), False),
    "linear": (_X2, lambda T, x: _F(T).linear(x, T.ones(2, 4, dtype=x.dtype)), False),
}


def _second_derivative(T, name):
    arr, f, _ = READS_INPUT[name]
    x = T.tensor(arr, requires_grad=True)
    y = f(T, x)
    (g,) = T.autograd.grad(
        y, x, T.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape))), create_graph=True
    )
    if not g.requires_grad:
        return False
    try:
        (h,) = T.autograd.grad(g.sum(), x, allow_unused=True)
    except RuntimeError as e:
        return str(e)
    return None if h is None else float(h.abs().sum())


@pytest.mark.parametrize("name", list(READS_INPUT))
def test_first_gradient_requires_grad_where_pytorchs_formula_reads_the_input(name):
    """Under create_graph=True the gradient of a piecewise-linear op depends on its input as
    PyTorch's does: it requires grad, with a zero (or undefined, or unimplemented) derivative."""
    expected = READS_INPUT[name][2]
    got = _second_derivative(dt, name)
    if isinstance(expected, str):
        assert expected in got
    else:
        assert got == expected


@pytest.mark.parametrize("name", ["relu", "max_pool2d", "avg_pool2d", "nll_loss", "pad_reflect"])
def test_gradgradcheck_of_piecewise_linear_ops(name):
    arr, f, _ = READS_INPUT[name]
    x = dt.tensor(arr + 0.01, requires_grad=True)  # (away from the kinks and ties)
    assert gradcheck(lambda v: f(dt, v), (x,))
    assert gradgradcheck(lambda v: f(dt, v), (x,))


def test_first_gradient_requires_grad_as_pytorch(torch):
    for name in READS_INPUT:
        ours, theirs = _second_derivative(dt, name), _second_derivative(torch, name)
        if isinstance(theirs, str):
            assert isinstance(ours, str) and theirs.split(" for ")[0] in ours, name
        else:
            assert ours == theirs, name


_A = rng.standard_normal((3, 3))
_B = rng.standard_normal((3, 2))
_EYE = np.eye(3)


def _spd(T, a):
    return a @ a.mT + T.tensor(_EYE)


DECOMPOSITIONS = {
    "inv": (lambda T, a, b: T.linalg.inv(a), 0),
    "solve": (lambda T, a, b: T.linalg.solve(a, b), 1),
    "solve_right": (lambda T, a, b: T.linalg.solve(a, b.mT, left=False), 1),
    "solve_triangular": (
        lambda T, a, b: T.linalg.solve_triangular(a.triu() + 3 * T.tensor(_EYE), b, upper=True),
        1,
    ),
    "det": (lambda T, a, b: T.linalg.det(a), 0),
    "slogdet": (lambda T, a, b: T.linalg.slogdet(a)[1], 0),
    "cholesky": (lambda T, a, b: T.linalg.cholesky(_spd(T, a)), 0),
    "cholesky_upper": (lambda T, a, b: T.linalg.cholesky(_spd(T, a), upper=True), 0),
    "eigh": (lambda T, a, b: T.linalg.eigh(a + a.mT)[0], 0),
    "eigh_vectors": (lambda T, a, b: T.linalg.eigh(a + a.mT)[1].abs(), 0),
    "svdvals": (lambda T, a, b: T.linalg.svdvals(a), 0),
    "svd": (lambda T, a, b: (lambda u, s, vh: u @ T.diag_embed(s.exp()) @ vh)(*T.linalg.svd(a)), 0),
    "svd_tall": (lambda T, a, b: T.linalg.svd(T.cat([a, b.mT]), full_matrices=False)[0].abs(), 1),
    "qr": (lambda T, a, b: T.linalg.qr(a)[1], 0),
    "matrix_exp": (lambda T, a, b: T.linalg.matrix_exp(a), 0),
    "eigvals": (lambda T, a, b: T.linalg.eigvals(a).abs(), 0),
    "pinv": (lambda T, a, b: T.linalg.pinv(a), 0),
}


@pytest.mark.parametrize("name", list(DECOMPOSITIONS))
def test_second_derivatives_through_decompositions(name):
    f, uses_b = DECOMPOSITIONS[name]
    a = dt.tensor(_A, requires_grad=True)
    b = dt.tensor(_B, requires_grad=True)
    inputs = (a, b) if uses_b else (a,)
    fn = (lambda a, b: f(dt, a, b)) if uses_b else (lambda a: f(dt, a, None))
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)
    out = fn(*inputs)
    v = dt.tensor(rng.standard_normal(tuple(out.shape)))
    plain = dt.autograd.grad(out, inputs, v, retain_graph=True)
    recorded = dt.autograd.grad(out, inputs, v, create_graph=True)  # (in tensor ops)
    for p, r in zip(plain, recorded):
        np.testing.assert_allclose(r.detach().numpy(), p.numpy(), rtol=1e-10, atol=1e-12)


def test_third_derivative_through_inverse():
    a = dt.tensor(_A + 3 * _EYE, requires_grad=True)
    assert gradgradcheck(lambda x: dt.func.grad(lambda y: dt.linalg.inv(y).sum())(x), (a,))


def test_hessians_through_decompositions_as_pytorch(torch):
    for name, (f, _) in DECOMPOSITIONS.items():
        out = []
        for T in (torch, dt):
            b = T.tensor(_B)
            h = T.func.hessian(lambda a, T=T, b=b: f(T, a, b).sum())(T.tensor(_A))
            out.append(h.numpy())
        np.testing.assert_allclose(out[1], out[0], rtol=1e-7, atol=1e-9, err_msg=name)


SMOOTH_SPECIALS = {  # backwards that were constants under create_graph (a silently missing second derivative)
    "sinc": (np.array([0.3, -1.7, 2.0, 0.05]), lambda T, x: T.sinc(x)),
    "logit": (np.array([0.2, 0.7, 0.45, 0.9]), lambda T, x: T.logit(x)),
    "logit_eps": (np.array([0.2, 0.6, 0.45, 0.9]), lambda T, x: T.logit(x, 0.3)),
}


@pytest.mark.parametrize("name", list(SMOOTH_SPECIALS))
def test_special_functions_second_derivatives(name):
    arr, f = SMOOTH_SPECIALS[name]
    x = dt.tensor(arr, requires_grad=True)
    assert gradcheck(lambda v: f(dt, v), (x,))
    assert gradgradcheck(lambda v: f(dt, v), (x,))


def test_special_functions_second_derivatives_as_pytorch(torch):
    for name, (arr, f) in {
        **SMOOTH_SPECIALS,
        "sinc_at_0": (np.array([0.0, 1.0]), lambda T, x: T.sinc(x)),
    }.items():
        out = []
        for T in (torch, dt):
            x = T.tensor(arr, requires_grad=True)
            (g,) = T.autograd.grad(f(T, x).sum(), x, create_graph=True)
            (h,) = T.autograd.grad(g.sum(), x)
            out.append((g.detach().numpy(), h.numpy()))  # (sinc's is NaN at 0, as PyTorch's)
        np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-12, err_msg=name)
        np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-10, err_msg=name)


_Q, _K, _V = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 3))
_MASK = rng.standard_normal((3, 5))
ATTENTION = {
    "plain": {},
    "causal": {"is_causal": True},
    "bool_mask": {"attn_mask": _MASK > -0.5},
    "float_mask": {"attn_mask": _MASK},
    "scale": {"scale": 0.3},
}


def _attention(T, name, q, k, v):
    kw = {key: T.tensor(val) if isinstance(val, np.ndarray) else val for key, val in ATTENTION[name].items()}
    return T.nn.functional.scaled_dot_product_attention(q, k, v, **kw)


@pytest.mark.parametrize("name", list(ATTENTION))
def test_second_derivatives_through_attention(name):
    inputs = tuple(dt.tensor(a, requires_grad=True) for a in (_Q, _K, _V))
    assert gradgradcheck(lambda q, k, v: _attention(dt, name, q, k, v), inputs)


def test_second_derivatives_through_attention_as_pytorch(torch):
    for name in ATTENTION:
        out = []
        for T in (torch, dt):
            q, k, v = (T.tensor(a, requires_grad=True) for a in (_Q, _K, _V))
            y = _attention(T, name, q, k, v)
            gs = T.autograd.grad((y * y.sin()).sum(), (q, k, v), create_graph=True)
            out.append([h.numpy() for h in T.autograd.grad(sum((g * g).sum() for g in gs), (q, k, v))])
        for ours, theirs in zip(out[1], out[0]):
            np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12, err_msg=name)
