"""Gradients found to differ from PyTorch's by differential fuzzing of backward passes: ops
PyTorch records without a derivative (backward raises), losses that refuse a weight or target
asking for a gradient, ties of the ranking losses' hinge, ``poisson_nll_loss``'s Stirling
term, ``p``-norms at zero, the LU family's gradients, and 0-d ``erfinv``/``ndtri``."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck, gradgradcheck

rng = np.random.default_rng(7)
A = rng.standard_normal((2, 3))
B = rng.uniform(0.5, 2.0, (2, 3))

NO_DERIVATIVE = {
    "floor_divide": (
        lambda T, a, b: T.floor_divide(a, b),
        RuntimeError,
        "derivative for aten::floor_divide is not",
    ),
    "//": (lambda T, a, b: a // 2, RuntimeError, "derivative for aten::floor_divide is not implemented"),
    "heaviside": (lambda T, a, b: T.heaviside(a, b), RuntimeError, "derivative for aten::heaviside is not"),
    "histogram": (
        lambda T, a, b: T.histogram(a, 3).hist,
        RuntimeError,
        "derivative for aten::histogram is not",
    ),
    "unique": (lambda T, a, b: T.unique(a), NotImplementedError, "the derivative for '_unique2' is not"),
    "unique_dim": (
        lambda T, a, b: T.unique(a, dim=0),
        NotImplementedError,
        "the derivative for 'unique_dim' is",
    ),
    "unique_consecutive": (
        lambda T, a, b: T.unique_consecutive(a),
        NotImplementedError,
        "the derivative for 'unique_consecutive' is",
    ),
}


@pytest.mark.parametrize("name", list(NO_DERIVATIVE))
def test_ops_without_derivative_raise_in_backward(name):
    f, error, message = NO_DERIVATIVE[name]
    a, b = dt.tensor(A, requires_grad=True), dt.tensor(B, requires_grad=True)
    out = f(dt, a, b)
    assert out.requires_grad and out.grad_fn is not None
    with pytest.raises(error, match=message):
        out.sum().backward()
    with dt.no_grad():
        assert not f(dt, a, b).requires_grad
    assert not f(dt, a.detach(), b.detach()).requires_grad


def test_ops_without_derivative_as_pytorch(torch):
    for name, (f, _, _) in NO_DERIVATIVE.items():
        raised = []
        for T in (torch, dt):
            out = f(T, T.tensor(A, requires_grad=True), T.tensor(B, requires_grad=True))
            with pytest.raises(Exception) as info:
                out.sum().backward()
            raised.append((out.grad_fn.name(), type(info.value).__name__, str(info.value)))
        assert raised[0] == raised[1], name


def test_erfinv_and_ndtri_keep_a_zero_dim_shape():
    for f in (dt.erfinv, dt.special.ndtri):
        x = dt.tensor(0.3, requires_grad=True)
        y = f(x)
        y.backward()
        assert y.shape == () and x.grad.shape == ()


LOSS_REFUSALS = {
    "binary_cross_entropy/weight": lambda F, x, w: F.binary_cross_entropy(
        x.sigmoid(), x.detach().sigmoid(), w
    ),
    "binary_cross_entropy_with_logits/weight": lambda F, x, w: F.binary_cross_entropy_with_logits(
        x, x.detach().sigmoid(), weight=w
    ),
    "binary_cross_entropy_with_logits/pos_weight": lambda F, x, w: F.binary_cross_entropy_with_logits(
        x, x.detach().sigmoid(), pos_weight=w
    ),
    "multi_margin_loss/weight": lambda F, x, w: F.multi_margin_loss(x, x.new_tensor([0, 2]).long(), weight=w),
    "soft_margin_loss/target": lambda F, x, w: F.soft_margin_loss(x, w),
}


@pytest.mark.parametrize("name", list(LOSS_REFUSALS))
def test_losses_refuse_an_argument_without_derivative_that_requires_grad(name):
    function, argument = name.split("/")
    x, w = dt.tensor(A, requires_grad=True), dt.tensor(B[0], requires_grad=True)
    message = f"The function '{function}' is not differentiable with respect to argument '{argument}'"
    with pytest.raises(RuntimeError, match=message):
        LOSS_REFUSALS[name](dt.nn.functional, x, w)
    with dt.no_grad():
        LOSS_REFUSALS[name](dt.nn.functional, x, w)
    LOSS_REFUSALS[name](dt.nn.functional, x, w.detach()).backward()


def test_loss_refusals_as_pytorch(torch):
    for name, f in LOSS_REFUSALS.items():
        messages = []
        for T in (torch, dt):
            with pytest.raises(RuntimeError) as info:
                f(T.nn.functional, T.tensor(A, requires_grad=True), T.tensor(B[0], requires_grad=True))
            messages.append(str(info.value))
        assert messages[0] == messages[1], name


def _ranking_losses(T, a, b):
    F = T.nn.functional
    y = T.tensor([1.0, -1.0], dtype=T.float64)
    return [
        F.margin_ranking_loss(a[:, 0], b[:, 0], y),
        F.cosine_embedding_loss(a, b, -y.abs(), margin=1.0),
        F.triplet_margin_loss(a, b, a * 2, margin=0.5),
        F.hinge_embedding_loss(a, -y.abs().unsqueeze(1).expand(2, 3), margin=1.0),
    ]


def test_ranking_losses_pass_the_gradient_at_a_tie(torch):
    """``max(z, 0)`` is PyTorch's ``clamp_min``: at ``z == 0`` the gradient passes."""
    tied = np.array([[1.0, 2.0, 0.0], [0.5, 0.5, 1.0]])  # a == b: margin_ranking's z and cos - 1 are 0
    grads = []
    for T in (torch, dt):
        a, b = T.tensor(tied, requires_grad=True), T.tensor(tied.copy(), requires_grad=True)
        sum(_ranking_losses(T, a, b)).backward()
        grads.append((a.grad.numpy(), b.grad.numpy()))
    for ours, theirs in zip(grads[1], grads[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    a = dt.tensor(A, requires_grad=True)
    assert gradcheck(lambda a, b: sum(_ranking_losses(dt, a, b)), (a, dt.tensor(B, requires_grad=True)))


def test_poisson_nll_full_differentiates_stirling_in_the_target(torch):
    x = dt.tensor(A, requires_grad=True)
    t = dt.tensor(B * 2, requires_grad=True)  # targets on both sides of 1, none at 1
    for log_input in (True, False):
        f = lambda x, t: dt.nn.functional.poisson_nll_loss(x.abs() + 0.1, t, log_input=log_input, full=True)  # noqa: E731
        assert gradcheck(f, (x, t))
    grads = []
    for T in (torch, dt):
        x, t = T.tensor([0.5, 0.2, 1.5], requires_grad=True), T.tensor([0.0, 0.5, 3.0], requires_grad=True)
        T.nn.functional.poisson_nll_loss(x, t, full=True, reduction="sum").backward()
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)  # NaN at a target of 0, as PyTorch's


def test_vector_norm_gradient_at_zeros(torch):
    x = np.array([[1.0, 0.0, -2.0], [0.0, 0.0, 0.0]])
    for ord in (0.5, 1.5, 3.0):
        grads = []
        for T in (torch, dt):
            t = T.tensor(x, requires_grad=True)
            T.linalg.vector_norm(t, ord, dim=1).sum().backward()
            grads.append(t.grad.numpy())
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, err_msg=str(ord))
    t = dt.tensor(x, requires_grad=True)  # a count: recorded, but no gradient reaches the input
    dt.linalg.vector_norm(t, 0, dim=1).sum().backward()
    assert t.grad is None
    t2 = dt.tensor(x, requires_grad=True)  # cdist's p = 0 passes zeros
    dt.cdist(t, t2, p=0).sum().backward()
    assert np.array_equal(t.grad.numpy(), np.zeros_like(x)) and np.array_equal(
        t2.grad.numpy(), np.zeros_like(x)
    )
    assert gradcheck(lambda t: dt.linalg.vector_norm(t, 3.0, dim=1), (dt.tensor(A, requires_grad=True),))


LU_SHAPES = [(3, 3), (2, 4), (4, 2), (2, 3, 3)]


@pytest.mark.parametrize("shape", LU_SHAPES)
def test_lu_factor_and_lu_gradcheck(shape):
    a = dt.tensor(np.random.default_rng(1).standard_normal(shape), requires_grad=True)
    assert gradcheck(lambda a: dt.linalg.lu_factor(a).LU, (a,))
    assert gradcheck(lambda a: dt.linalg.lu(a)[1:], (a,))
    assert gradcheck(lambda a: dt.lu_unpack(*dt.linalg.lu_factor(a))[1:], (a,))


def test_lu_solve_gradcheck_and_second_derivative():
    r = np.random.default_rng(2)
    a = dt.tensor(r.standard_normal((2, 3, 3)) + 3 * np.eye(3), requires_grad=True)
    b = dt.tensor(r.standard_normal((2, 3, 2)), requires_grad=True)
    for left in (True, False):
        for adjoint in (True, False):

            def f(a, b, left=left, adjoint=adjoint):
                lu, piv = dt.linalg.lu_factor(a)
                return dt.linalg.lu_solve(lu, piv, b if left else b.mT, left=left, adjoint=adjoint)

            assert gradcheck(f, (a, b))
    assert gradgradcheck(lambda a: dt.linalg.lu_factor(a).LU, (a,))


def test_lu_gradients_as_pytorch(torch):
    r = np.random.default_rng(3)
    for shape in LU_SHAPES:
        x = r.standard_normal(shape)
        grads = []
        for T in (torch, dt):
            a = T.tensor(x, requires_grad=True)
            _, low, up = T.linalg.lu(a)
            lu, piv = T.linalg.lu_factor(a)
            out = (low * low).sum() + (up**3).sum() + lu.sin().sum()
            if shape[-1] == shape[-2]:
                out = out + T.linalg.lu_solve(lu, piv, a.mT, adjoint=True).sum()
            out.backward()
            grads.append(a.grad.numpy())
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- second derivatives and transforms
def test_normalize_is_twice_differentiable():
    x = dt.tensor(A, requires_grad=True)
    for p in (1.0, 2.0, 3.0):
        assert gradgradcheck(lambda a, p=p: dt.nn.functional.normalize(a, p=p, dim=1), (x,))


def test_norm_derivatives_at_a_zero_vector(torch):
    for T in (torch, dt):
        zero, ones = T.zeros(2, dtype=T.float64), T.ones(2, dtype=T.float64)
        F = T.nn.functional
        tangents = [
            T.func.jvp(lambda a: a.norm(), (zero,), (ones,))[1],
            T.func.jvp(lambda a: a.norm(p=3), (zero,), (ones,))[1],
            T.func.jacrev(lambda a: F.cosine_similarity(a, a + 1, dim=0))(zero),
        ]
        assert all(not t.isnan().any() for t in tangents)
    x = dt.tensor([1.0, -2.0, 0.5], dtype=dt.float64, requires_grad=True)
    assert gradgradcheck(lambda a: a.norm(p=3), (x,))


def _kinks(T, x, w):
    F = T.nn.functional
    zero = T.zeros_like(x)
    return [
        F.prelu(x, w),
        F.elu(x),
        F.celu(x, alpha=0.5),
        F.huber_loss(x, zero, delta=0.5, reduction="none"),
        F.smooth_l1_loss(x, zero, beta=0.5, reduction="none"),
    ]


def test_second_derivatives_at_kinks_as_pytorch(torch):
    """At the kinks (0 for prelu and the ELUs, ``|d| == bound`` for the Huber and smooth L1
    losses) PyTorch's double backward has no second derivative, while the first is one side's."""
    x = np.array([0.0, 0.5, -0.5, 1.0, -1.5, 0.0])
    seconds = []
    for T in (torch, dt):
        xs, w = T.tensor(x, requires_grad=True), T.tensor([0.25], dtype=T.float64, requires_grad=True)
        out = []
        for y in _kinks(T, xs, w):
            g = T.autograd.grad(
                (y * T.arange(6, dtype=T.float64)).sum(), (xs, w), create_graph=True, allow_unused=True
            )
            penalty = sum((gi * gi).sum() for gi in g if gi is not None)
            second = T.autograd.grad(penalty, (xs, w), allow_unused=True)
            out.append([gi.detach().numpy() for gi in g + second if gi is not None])
        seconds.append(out)
    for ours, theirs in zip(seconds[1], seconds[0]):
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    away = dt.tensor(x + 0.1, requires_grad=True)
    assert gradgradcheck(
        lambda a: sum(y.sum() for y in _kinks(dt, a, dt.tensor([0.25], dtype=dt.float64))), (away,)
    )


def test_forward_ad_tangent_through_zero_derivative_ops_is_zero():
    fa = dt.autograd.forward_ad
    with fa.dual_level():
        x = fa.make_dual(dt.tensor([1.5, 2.0]), dt.tensor([1.0, 1.0]))
        for y in (x.ceil(), x.sign() * 2, dt.div(x, 2, rounding_mode="floor")):
            assert np.array_equal(fa.unpack_dual(y).tangent.numpy(), np.zeros(2))
        assert fa.unpack_dual(x.detach()).tangent is None


def test_jacobians_of_empty_outputs_and_inputs():
    assert dt.func.hessian(lambda a: dt.logcumsumexp(a, 0).sum())(dt.zeros(1, 0, 3)).shape == (
        1,
        0,
        3,
        1,
        0,
        3,
    )
    assert dt.func.jacrev(lambda a: a.cumprod(0))(dt.zeros(3, 0)).shape == (3, 0, 3, 0)
    x = dt.zeros(2, 2, 0, dtype=dt.float64, requires_grad=True)
    w, b = (
        dt.zeros(1, 0, dtype=dt.float64, requires_grad=True),
        dt.ones(1, dtype=dt.float64, requires_grad=True),
    )
    out = dt.nn.functional.linear(x, w, b)
    out.sum().backward()
    assert out.shape == (2, 2, 1) and x.grad.shape == (2, 2, 0) and b.grad.item() == 4
    assert dt.func.jvp(dt.nn.functional.linear, (x, w, b), (x, w, b))[1].shape == (2, 2, 1)


def test_cumsum_of_a_zero_dim_tensor_twice_differentiable():
    x = dt.tensor(0.3, dtype=dt.float64, requires_grad=True)
    (g,) = dt.autograd.grad(dt.logcumsumexp(x * x, 0), x, create_graph=True)
    assert dt.autograd.grad(g, x)[0].item() == pytest.approx(2.0)


def test_loss_refusals_skip_tensors_a_transform_tracks():
    F = dt.nn.functional
    x, w, t = dt.tensor(A[:1]), dt.tensor(B[0, :2]), dt.tensor([[0.2, 0.9, 0.5]], dtype=dt.float64)
    f = lambda x, w: F.binary_cross_entropy_with_logits(x, t, pos_weight=w.repeat(2)[:3])  # noqa: E731
    assert dt.func.jacrev(f, argnums=0)(x, w).shape == (1, 3)
    with dt.autograd.forward_ad.dual_level():
        fa = dt.autograd.forward_ad
        assert fa.unpack_dual(f(fa.make_dual(x, dt.ones_like(x)), fa.make_dual(w, w))).tangent is not None


def test_diagonal_scatter_of_a_rectangular_block(torch):
    r = np.random.default_rng(4)
    for shape, offset, d1, d2 in [((3, 4, 2), 0, 0, -1), ((2, 3), -1, 1, 0), ((3, 3), 1, 0, 1)]:
        x = dt.tensor(r.standard_normal(shape), requires_grad=True)
        src = dt.tensor(r.standard_normal(tuple(x.diagonal(offset, d1, d2).shape)), requires_grad=True)
        assert gradcheck(lambda x, s, o=offset, a=d1, b=d2: dt.diagonal_scatter(x, s, o, a, b), (x, src))
        want = torch.diagonal_scatter(
            torch.tensor(x.detach().numpy()), torch.tensor(src.detach().numpy()), offset, d1, d2
        )
        np.testing.assert_array_equal(
            dt.diagonal_scatter(x, src, offset, d1, d2).detach().numpy(), want.numpy()
        )


def test_max_and_min_of_all_elements_send_a_nan_results_gradient_to_the_nans(torch):
    grads = []
    for T in (torch, dt):
        row = []
        for f in (lambda a: a.min(), lambda a: a.max(), lambda a: a.amax()):
            a = T.tensor([float("nan"), 1.0, float("nan")], requires_grad=True)
            f(a).backward()
            row.append(a.grad.numpy())
        grads.append(row)
    for ours, theirs in zip(grads[1], grads[0]):
        np.testing.assert_array_equal(ours, theirs)


def test_max_pool_ties_go_to_the_first_maximum_in_row_major_order(torch):
    """Equal maxima in different rows and columns of a window (``[[0, 1], [1, 0]]``, or -0.0
    and 0.0): the first in PyTorch's scan order wins, for the indices and the gradient."""
    x = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, -0.0], [0.0, 1.0, 0.0]])
    x3 = np.stack([x, x[::-1]])
    for nd, data in ((2, x[None, None]), (3, x3[None, None])):
        seen = []
        for T in (torch, dt):
            t = T.tensor(data, requires_grad=True)
            pool = T.nn.functional.max_pool2d if nd == 2 else T.nn.functional.max_pool3d
            y, i = pool(t, 2, 1, return_indices=True)
            (y * T.arange(y.numel(), dtype=T.float64).reshape(y.shape)).sum().backward()
            seen.append((i.numpy(), t.grad.numpy()))
        np.testing.assert_array_equal(seen[1][0], seen[0][0])
        np.testing.assert_array_equal(seen[1][1], seen[0][1])


def test_vander_sizes_as_pytorch():
    with pytest.raises(RuntimeError, match=r"^N must be greater than 1\.$"):
        dt.linalg.vander(dt.tensor([1.0, 2.0]), N=1)
    with pytest.raises(RuntimeError, match=r"^N must be non-negative\.$"):
        dt.vander(dt.tensor([1.0, 2.0]), N=-1)
    assert dt.vander(dt.tensor([1.0, 2.0]), N=0).shape == (2, 0)
    assert dt.vander(dt.tensor([3.0])).tolist() == [[1.0]]
    x = dt.tensor([0.5, -1.5], dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda a: dt.vander(a, N=3), (x,))
