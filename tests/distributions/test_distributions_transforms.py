"""Transforms (values, inverses, log-Jacobians vs PyTorch and gradcheck), constraints, the
biject_to/transform_to registries, argument validation, register_kl dispatch."""

import math

import numpy as np
import pytest

import disttorch as dt
from disttorch import distributions as D
from disttorch.autograd import gradcheck
from disttorch.distributions import constraints
from disttorch.distributions import transforms as T

RNG = np.random.default_rng(11)


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


TRANSFORMS = {
    "Exp": (lambda M, lib: M.ExpTransform(), (4, 3)),
    "Sigmoid": (lambda M, lib: M.SigmoidTransform(), (4, 3)),
    "Tanh": (lambda M, lib: M.TanhTransform(), (4, 3)),
    "Softplus": (lambda M, lib: M.SoftplusTransform(), (4, 3)),
    "Affine": (
        lambda M, lib: M.AffineTransform(lib.tensor([0.5, -1.0, 2.0]), lib.tensor([2.0, -0.5, 1.5])),
        (4, 3),
    ),
    "Affine-event": (lambda M, lib: M.AffineTransform(1.0, lib.tensor([2.0, 0.5, 3.0]), event_dim=1), (4, 3)),
    "Power": (lambda M, lib: M.PowerTransform(lib.tensor(2.5)), (4, 3)),
    "StickBreaking": (lambda M, lib: M.StickBreakingTransform(), (4, 3)),
    "Compose": (lambda M, lib: M.ComposeTransform([M.AffineTransform(0.3, 2.0), M.ExpTransform()]), (4, 3)),
    "Independent": (lambda M, lib: M.IndependentTransform(M.SigmoidTransform(), 1), (4, 3)),
    "Reshape": (lambda M, lib: M.ReshapeTransform((3,), (3, 1)), (4, 3)),
    "LowerCholesky": (lambda M, lib: M.LowerCholeskyTransform(), (2, 3, 3)),
    "CorrCholesky": (lambda M, lib: M.CorrCholeskyTransform(), (2, 3)),
    "Softmax": (lambda M, lib: M.SoftmaxTransform(), (4, 3)),
    "Cat": (
        lambda M, lib: M.CatTransform([M.ExpTransform(), M.SigmoidTransform()], dim=1, lengths=[1, 2]),
        (4, 3),
    ),
    "Stack": (
        lambda M, lib: M.StackTransform([M.ExpTransform(), M.TanhTransform(), M.SigmoidTransform()], dim=1),
        (4, 3),
    ),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transform_matches_pytorch(torch, name):
    make, shape = TRANSFORMS[name]
    x = RNG.standard_normal(shape) * 0.7
    if name == "Power":
        x = np.abs(x) + 0.1
    ours = make(T, dt)
    theirs = make(torch.distributions.transforms, torch)
    xo, xt = dt.tensor(x), torch.tensor(x)
    yo, yt = ours(xo), theirs(xt)
    np.testing.assert_allclose(yo.numpy(), yt.numpy(), rtol=1e-10, atol=1e-12)
    if name not in ("Softmax", "LowerCholesky"):  # not injective on their domains
        np.testing.assert_allclose(ours.inv(yo).numpy(), x, rtol=1e-6, atol=1e-8)
    if name not in ("Softmax", "Stack", "LowerCholesky"):
        expected = theirs.log_abs_det_jacobian(xt, yt)
        np.testing.assert_allclose(
            ours.log_abs_det_jacobian(xo, yo).numpy(),
            expected.numpy(),
            rtol=1e-8 if expected.dtype == torch.float64 else 1e-6,  # float32 (Affine's scale): to an ulp
            atol=1e-10,
        )
    assert tuple(ours.forward_shape(shape)) == tuple(theirs.forward_shape(shape))
    assert ours.bijective == theirs.bijective
    assert ours.domain.event_dim == theirs.domain.event_dim
    assert ours.codomain.event_dim == theirs.codomain.event_dim


@pytest.mark.parametrize(
    "transform",
    [
        T.ExpTransform(),
        T.SigmoidTransform(),
        T.TanhTransform(),
        T.SoftplusTransform(),
        T.StickBreakingTransform(),
        T.AffineTransform(0.5, 2.0),
    ],
    ids=lambda t: type(t).__name__,
)
def test_transform_and_log_det_gradcheck(transform):
    x = dt.tensor(RNG.standard_normal((2, 3)) * 0.5, requires_grad=True)
    assert gradcheck(lambda a: transform(a), (x,))
    assert gradcheck(lambda a: transform.log_abs_det_jacobian(a, transform(a)), (x,))


def test_inverse_and_cache():
    t = T.ExpTransform(cache_size=1)
    x = dt.tensor([0.5, 1.0])
    y = t(x)
    assert t.inv(y) is x and t.inv.inv is t
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    assert t.sign == 1 and T.AffineTransform(0.0, -2.0).sign == -1
    with pytest.raises(ValueError, match="cache_size"):
        T.ExpTransform(cache_size=2)


@pytest.mark.parametrize(
    "constraint",
    [
        constraints.real,
        constraints.positive,
        constraints.unit_interval,
        constraints.interval(-2.0, 3.0),
        constraints.greater_than(1.5),
        constraints.less_than(-1.0),
        constraints.simplex,
        constraints.real_vector,
        constraints.lower_cholesky,
        constraints.positive_definite,
        constraints.corr_cholesky,
    ],
    ids=repr,
)
def test_transform_to_lands_in_the_constraint(constraint):
    shape = (2, 3, 3) if constraint.event_dim == 2 else (2, 3)
    x = dt.tensor(RNG.standard_normal(shape))
    if constraint is constraints.corr_cholesky:
        x = dt.tensor(RNG.standard_normal((2, 3)))
    y = D.transform_to(constraint)(x)
    assert bool(constraint.check(y).all()), (constraint, y)
    if constraint not in (constraints.lower_cholesky, constraints.positive_definite):
        b = D.biject_to(constraint)
        np.testing.assert_allclose(b.inv(b(x)).numpy(), x.numpy(), rtol=1e-4, atol=1e-5)


def test_constraint_checks_and_registry_errors():
    assert constraints.positive.check(dt.tensor([1.0, 0.0, -1.0])).tolist() == [True, False, False]
    assert constraints.simplex.check(dt.tensor([[0.2, 0.8], [0.5, 0.6]])).tolist() == [True, False]
    assert constraints.integer_interval(0, 3).check(dt.tensor([0.0, 3.0, 1.5, 4.0])).tolist() == [
        True,
        True,
        False,
        False,
    ]
    assert constraints.independent(constraints.positive, 1).check(
        dt.tensor([[1.0, 2.0], [1.0, -1.0]])
    ).tolist() == [True, False]
    assert constraints.is_dependent(constraints.dependent) and not constraints.is_dependent(constraints.real)
    with pytest.raises(NotImplementedError, match="Cannot transform"):
        D.biject_to(constraints.boolean)
    with pytest.raises(ValueError, match="dependent"):
        constraints.dependent.check(dt.tensor([1.0]))


def test_validation_errors_name_the_parameter_and_the_support():
    with pytest.raises(ValueError, match="Expected parameter scale .* constraint GreaterThan"):
        D.Normal(dt.tensor([0.0]), dt.tensor([-1.0]))
    with pytest.raises(ValueError, match="within the support"):
        D.Exponential(dt.tensor([1.0])).log_prob(dt.tensor([-1.0]))
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Bernoulli(probs=dt.tensor([0.5]), logits=dt.tensor([0.0]))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix"):
        D.MultivariateNormal(dt.zeros(2))
    D.Normal(dt.tensor([0.0]), dt.tensor([-1.0]), validate_args=False)  # no check when asked
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(dt.tensor([0.0]), dt.tensor([-1.0]))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="event_shape"):
        D.Dirichlet(dt.ones(3)).log_prob(dt.ones(4) / 4)


def test_register_kl_dispatches_to_the_most_specific_pair():
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(dt.tensor(0.0), dt.tensor(1.0)), D.Normal(dt.tensor(1.0), dt.tensor(2.0))
    expected = 0.5 * (0.25 + 0.25 - 1 - math.log(0.25))
    assert D.kl_divergence(p, q).item() == pytest.approx(expected)

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return dt.tensor(42.0)

    assert D.kl_divergence(p, q).item() == 42.0
    assert D.kl_divergence(D.Normal(dt.tensor(0.0), dt.tensor(1.0)), q).item() == pytest.approx(expected)
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.Poisson(dt.tensor(1.0)), D.Normal(dt.tensor(0.0), dt.tensor(1.0)))
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


def test_shapes_perplexity_repr_and_independent():
    d = D.Independent(D.Normal(dt.zeros(2, 3), dt.ones(2, 3)), 1)
    assert tuple(d.batch_shape) == (2,) and tuple(d.event_shape) == (3,)
    assert tuple(d.log_prob(dt.zeros(5, 2, 3)).shape) == (5, 2)
    assert tuple(d.rsample((4,)).shape) == (4, 2, 3)
    n = D.Normal(0.0, 1.0)
    assert tuple(n.batch_shape) == () and n.perplexity().item() == pytest.approx(math.exp(n.entropy().item()))
    assert repr(n) == "Normal(loc: 0.0, scale: 1.0)"
    assert D.Categorical(logits=dt.zeros(4)).entropy().item() == pytest.approx(math.log(4))
