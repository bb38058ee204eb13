"""torch.autograd.functional (jacobian, hessian, vjp, jvp, vhp, hvp: values, tuple vs tensor
results, strict, create_graph, strategies) and torch.autograd.forward_ad (dual tensors)."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import forward_ad as fwAD
from disttorch.autograd import functional as F

RNG = np.random.default_rng(21)
X = RNG.normal(size=(3, 3))
Y = RNG.normal(size=(3, 3))
V = RNG.normal(size=(3, 3))
W = RNG.normal(size=(3, 3))


def _pair(lib, *arrays):
    return tuple(lib.tensor(a) for a in arrays)


def f2(x, y):
    return (x.sin() * y).sum(), x @ y.exp()


def s2(x, y):
    return (x.sin() * y**2).sum() + (x * x).sum() * y.sum()


def _close(a, b):
    if isinstance(b, (tuple, list)):  # the same container: forward mode nests lists, as PyTorch's
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
    else:
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-7, atol=1e-10)


# ------------------------------------------------------------------ result structure and closed forms


def test_jacobian_result_structure_follows_inputs_and_outputs():
    x, y = _pair(dt, X, Y)
    assert isinstance(F.jacobian(lambda a: a.exp(), x), dt.Tensor)
    j = F.jacobian(lambda a: a.exp(), (x,))
    assert isinstance(j, tuple) and len(j) == 1 and j[0].shape == (3, 3, 3, 3)
    j = F.jacobian(lambda a, b: (a * b, a.sum()), (x, y))
    assert len(j) == 2 and len(j[0]) == 2 and j[1][1].shape == (3, 3)
    np.testing.assert_allclose(j[1][0].numpy(), np.ones((3, 3)))
    np.testing.assert_allclose(j[0][1].numpy().reshape(9, 9), np.diag(X.ravel()))
    j = F.jacobian(lambda a: (a, a * 2), x)
    assert isinstance(j, tuple) and len(j) == 2 and j[1].shape == (3, 3, 3, 3)


def test_hessian_vhp_hvp_closed_form():
    m = RNG.normal(size=(3, 3))
    q = dt.tensor(m)
    x, v = dt.tensor(X[0]), dt.tensor(V[0])
    h = F.hessian(lambda t: t @ q @ t, x)
    np.testing.assert_allclose(h.numpy(), m + m.T, atol=1e-12)
    out, hv = F.hvp(lambda t: t @ q @ t, x, v)
    np.testing.assert_allclose(hv.numpy(), (m + m.T) @ V[0], atol=1e-12)
    out, vh = F.vhp(lambda t: t @ q @ t, x, v)
    np.testing.assert_allclose(vh.numpy(), V[0] @ (m + m.T), atol=1e-12)
    assert float(out) == pytest.approx(X[0] @ m @ X[0])


def test_vjp_and_jvp_default_v_for_single_elements():
    out, g = F.vjp(lambda t: (t**2).sum(), dt.tensor(X))
    np.testing.assert_allclose(g.numpy(), 2 * X)
    out, jv = F.jvp(lambda t: t * dt.tensor(X), dt.tensor(2.0, dtype=dt.float64))
    np.testing.assert_allclose(jv.numpy(), X)


def test_independent_inputs_give_zeros_and_strict_raises():
    x, y = _pair(dt, X, Y)
    _, g = F.vjp(lambda a, b: a.exp(), (x, y), dt.tensor(V))
    assert not g[1].numpy().any()
    with pytest.raises(RuntimeError, match="independent of input 1"):
        F.vjp(lambda a, b: a.exp(), (x, y), dt.tensor(V), strict=True)
    j = F.jacobian(lambda a, b: a.exp(), (x, y))
    assert not j[1].numpy().any()
    with pytest.raises(
        RuntimeError, match="Output 0 of the user-provided function is independent of input 1"
    ):
        F.jacobian(lambda a, b: a.exp(), (x, y), strict=True)
    with pytest.raises(RuntimeError, match="does not require gradients"):
        F.jacobian(lambda a: dt.zeros(3), x, strict=True)


def test_create_graph_keeps_results_differentiable():
    x = dt.tensor(X[0], requires_grad=True)
    j = F.jacobian(lambda t: t**3, x, create_graph=True)
    assert j.requires_grad
    j.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * X[0])
    assert not F.jacobian(lambda t: t**3, x).requires_grad


def test_results_pass_gradcheck_under_create_graph():
    x = dt.tensor(X[0], requires_grad=True)
    v = dt.tensor(V[0])
    assert dt.autograd.gradcheck(
        lambda t: F.jvp(lambda u: u.sin() * u.sum(), t, v, create_graph=True)[1], (x,)
    )
    assert dt.autograd.gradcheck(
        lambda t: F.hvp(lambda u: (u.exp() * u).sum(), t, v, create_graph=True)[1], (x,)
    )


def test_argument_errors():
    x = dt.tensor(X)
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        F.jacobian(lambda a: a, [x])
    with pytest.raises(RuntimeError, match="v has invalid size"):
        F.vjp(lambda a: a * 2, x, dt.ones(2, dtype=dt.float64))
    with pytest.raises(RuntimeError, match="v can only be None"):
        F.vjp(lambda a: a * 2, x)
    with pytest.raises(AssertionError, match="forward-mode"):
        F.jacobian(lambda a: a, x, strategy="sideways")
    with pytest.raises(NotImplementedError, match="vectorize=True"):
        F.jacobian(lambda a: a, x, strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="create_graph=True"):
        F.jacobian(lambda a: a, x, strategy="forward-mode", vectorize=True, create_graph=True)
    with pytest.raises(RuntimeError, match="should contain a single element"):
        F.hessian(lambda a: a * 2, x)


# ------------------------------------------------------------------ forward AD


def test_dual_tensor_tangent_is_the_directional_derivative():
    x, v = dt.tensor(X), dt.tensor(V)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        assert d._base is x  # a view of the primal, as PyTorch's
        p, t = fwAD.unpack_dual(d)
        np.testing.assert_allclose(t.numpy(), V)
        out = (d.sin() * d).sum(1)
        p, t = fwAD.unpack_dual(out)
        np.testing.assert_allclose(p.numpy(), (np.sin(X) * X).sum(1))
        np.testing.assert_allclose(t.numpy(), ((np.cos(X) * X + np.sin(X)) * V).sum(1))
        assert fwAD.unpack_dual(dt.ones(3)).tangent is None
        assert isinstance(fwAD.unpack_dual(out), fwAD.UnpackedDualTensor)
    assert fwAD.unpack_dual(out).tangent is None  # the level is gone


def test_forward_ad_errors():
    x = dt.tensor(X)
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(ValueError, match="floating point"):
            fwAD.make_dual(dt.tensor([1, 2]), dt.tensor([1.0, 2.0]))
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(x, dt.ones(2, dtype=dt.float64))
        with pytest.raises(RuntimeError, match="Nested forward mode AD"):
            fwAD.enter_dual_level()


# ------------------------------------------------------------------ parity with PyTorch


@pytest.mark.parity
@pytest.mark.parametrize(
    "strategy,vectorize", [("reverse-mode", False), ("reverse-mode", True), ("forward-mode", True)]
)
def test_jacobian_and_hessian_match_pytorch(torch, strategy, vectorize):
    d, t = _pair(dt, X, Y), _pair(torch, X, Y)
    kw = dict(strategy=strategy, vectorize=vectorize)
    _close(F.jacobian(f2, d, **kw), torch.autograd.functional.jacobian(f2, t, **kw))
    _close(
        F.jacobian(lambda a: a.exp() * 2, d[0], **kw),
        torch.autograd.functional.jacobian(lambda a: a.exp() * 2, t[0], **kw),
    )
    hk = dict(outer_jacobian_strategy=strategy, vectorize=vectorize)
    _close(F.hessian(s2, d, **hk), torch.autograd.functional.hessian(s2, t, **hk))
    _close(
        F.hessian(lambda a: s2(a, a), d[0], **hk),
        torch.autograd.functional.hessian(lambda a: s2(a, a), t[0], **hk),
    )


@pytest.mark.parity
def test_products_match_pytorch(torch):
    TF = torch.autograd.functional
    d, t = _pair(dt, X, Y), _pair(torch, X, Y)
    dv, tv = _pair(dt, V, W), _pair(torch, V, W)
    _close(
        F.vjp(f2, d, (dt.tensor(1.5, dtype=dt.float64), dv[0])),
        TF.vjp(f2, t, (torch.tensor(1.5, dtype=torch.float64), tv[0])),
    )
    _close(F.jvp(f2, d, dv), TF.jvp(f2, t, tv))
    _close(F.hvp(s2, d, dv), TF.hvp(s2, t, tv))
    _close(F.vhp(s2, d, dv), TF.vhp(s2, t, tv))
    _close(F.hvp(lambda a: s2(a, a), d[0], dv[0]), TF.hvp(lambda a: s2(a, a), t[0], tv[0]))


@pytest.mark.parity
def test_forward_ad_matches_pytorch(torch):
    def f(a, b):
        return (a @ b).tanh() + a.exp().sum() * b

    with fwAD.dual_level():
        out = f(fwAD.make_dual(dt.tensor(X), dt.tensor(V)), fwAD.make_dual(dt.tensor(Y), dt.tensor(W)))
        ours = fwAD.unpack_dual(out)
    TA = torch.autograd.forward_ad
    with TA.dual_level():
        out = f(
            TA.make_dual(torch.tensor(X), torch.tensor(V)), TA.make_dual(torch.tensor(Y), torch.tensor(W))
        )
        theirs = TA.unpack_dual(out)
    _close(tuple(ours), tuple(theirs))


def _dual_through_a_weight(lib):
    """A dual input through a layer whose weight requires grad (not a dual): whether the
    primal and tangent require grad, and the weight's gradient of both."""
    weight = lib.tensor(Y, requires_grad=True)
    with lib.autograd.forward_ad.dual_level():
        ad = lib.autograd.forward_ad
        primal, tangent = ad.unpack_dual(
            lib.nn.functional.linear(ad.make_dual(lib.tensor(X), lib.tensor(V)), weight)
        )
        flags = (primal.requires_grad, tangent.requires_grad)
        grads = lib.autograd.grad((primal.sin() + tangent**2).sum(), weight)
    return flags, grads[0].detach().numpy()


def test_tangents_keep_the_history_of_tensors_that_require_grad():
    flags, grad = _dual_through_a_weight(dt)
    assert flags == (True, True) and np.abs(grad).sum() > 0


@pytest.mark.parity
def test_tangents_keep_the_history_of_tensors_that_require_grad_as_pytorch(torch):
    ours, theirs = _dual_through_a_weight(dt), _dual_through_a_weight(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)


def test_autograd_grad_is_grads_batched():
    x = dt.tensor(X[0], requires_grad=True)
    y = x.sin() * x.sum()
    (g,) = dt.autograd.grad(y, x, dt.eye(3, dtype=dt.float64), is_grads_batched=True)
    np.testing.assert_allclose(g.numpy(), F.jacobian(lambda t: t.sin() * t.sum(), x).numpy())
    with pytest.raises(RuntimeError, match="leading batch dimension"):
        dt.autograd.grad(x.sum(), x, dt.tensor(1.0, dtype=dt.float64), is_grads_batched=True)


def test_dual_level_works_inside_no_grad_and_restores_the_mode():
    x, v = dt.tensor(X), dt.tensor(V)
    with dt.no_grad(), fwAD.dual_level():
        _, t = fwAD.unpack_dual(fwAD.make_dual(x, v).exp())
        np.testing.assert_allclose(t.numpy(), np.exp(X) * V)
    assert dt.is_grad_enabled()
    with dt.no_grad():
        with fwAD.dual_level():
            assert dt.is_grad_enabled()
        assert not dt.is_grad_enabled()


def _strict_second_order_errors(L) -> list:
    """``hvp``/``vhp``/``hessian`` in strict mode of a linear function (a Jacobian that does not
    depend on the input): PyTorch's message for each."""
    x = L.tensor([1.0, 2.0], requires_grad=True)
    af = L.autograd.functional
    out = []
    for call in (
        lambda f: af.hvp(f, x, L.ones(2), strict=True),
        lambda f: af.vhp(f, x, L.ones(2), strict=True),
        lambda f: af.hessian(f, x, strict=True),
    ):
        try:
            call(lambda t: t.sum() * 2)
            out.append("computes")
        except RuntimeError as e:
            out.append(str(e))
    return out


def test_strict_second_order_products_refuse_a_linear_function():
    message = (
        "While computing the hessian, found that the jacobian of the user-provided function with respect to "
        "input 0 is independent of the input. This is not allowed in strict mode."
    )
    assert all(e.startswith(message) for e in _strict_second_order_errors(dt))


@pytest.mark.parity
def test_strict_second_order_errors_as_pytorch(torch):
    assert _strict_second_order_errors(dt) == _strict_second_order_errors(torch)
