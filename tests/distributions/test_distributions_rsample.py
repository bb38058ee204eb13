"""Reparameterised sampling: rsample gradients pass float64 gradcheck (the noise fixed by
re-seeding), the implicit gamma gradient equals PyTorch's, and sample statistics match
the distributions' moments."""

import numpy as np
import pytest

import disttorch as dt
from disttorch import distributions as D
from disttorch.autograd import gradcheck


def _p(values):
    return dt.tensor(np.array(values, dtype=np.float64), requires_grad=True)


def _seeded(make, shape=(3,)):
    def fn(*params):
        dt.manual_seed(123)
        return make(*params).rsample(shape)

    return fn


@pytest.mark.parametrize(
    "make,params",
    [
        (lambda m, s: D.Normal(m, s), ([0.5, -1.0], [1.0, 2.0])),
        (lambda lo, hi: D.Uniform(lo, hi), ([0.0, -1.0], [1.0, 2.0])),
        (lambda r: D.Exponential(r), ([0.5, 2.0],)),
        (lambda m, s: D.Laplace(m, s), ([0.5, -1.0], [1.0, 2.0])),
        (lambda m, s: D.Cauchy(m, s), ([0.5, -1.0], [1.0, 2.0])),
        (lambda m, s: D.LogNormal(m, s), ([0.1, -0.2], [0.3, 0.5])),
        (lambda s: D.HalfNormal(s), ([0.3, 1.5],)),
        (
            lambda m, c: D.MultivariateNormal(m, scale_tril=c.tril() + 2 * dt.eye(2, dtype=dt.float64)),
            ([0.5, -1.0], [[1.0, 0.0], [0.3, 0.5]]),
        ),
        (lambda m, w, d: D.LowRankMultivariateNormal(m, w, d), ([0.5, -1.0], [[1.0], [0.3]], [0.5, 2.0])),
        (lambda p: D.RelaxedBernoulli(dt.tensor(0.7, dtype=dt.float64), probs=p), ([0.3, 0.8],)),
        (
            lambda lg: D.RelaxedOneHotCategorical(dt.tensor(0.5, dtype=dt.float64), logits=lg),
            ([0.3, -0.8, 1.0],),
        ),
    ],
)
def test_rsample_gradcheck(make, params):
    assert gradcheck(_seeded(make), tuple(_p(v) for v in params))


def test_gamma_family_rsample_gradient_w_r_t_rate_passes_gradcheck():
    conc = dt.tensor([0.7, 2.5], dtype=dt.float64)
    assert gradcheck(_seeded(lambda r: D.Gamma(conc, r)), (_p([0.5, 2.0]),))


@pytest.mark.parity
def test_implicit_gamma_gradient_matches_pytorch():
    torch = pytest.importorskip("torch")
    from disttorch.distributions.gamma import standard_gamma_grad

    rng = np.random.default_rng(0)
    alpha = np.concatenate([rng.uniform(0.05, 1, 50), rng.uniform(1, 20, 50), rng.uniform(20, 500, 50)])
    x = rng.gamma(alpha)
    expected = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    # PyTorch uses rational approximations (about 1e-3 in places); ours is the series (exact, see below)
    np.testing.assert_allclose(standard_gamma_grad(x, alpha), expected, rtol=2e-3)
    big = np.array([3000.0, 5000.0])
    xb = big + np.array([40.0, -60.0])
    np.testing.assert_allclose(
        standard_gamma_grad(xb, big),
        torch._standard_gamma_grad(torch.tensor(big), torch.tensor(xb)).numpy(),
        rtol=1e-3,
    )


def test_implicit_gamma_gradient_matches_finite_differences_of_the_inverse_cdf():
    from disttorch.distributions.gamma import _regularized_lower_gamma, standard_gamma_grad

    for a, x in [(0.3, 0.05), (2.5, 1.7), (40.0, 43.0)]:
        level = _regularized_lower_gamma(np.array(a), np.array(x))
        # dx/da at fixed level: -(dP/da) / (dP/dx)
        h = 1e-5 * a
        dp_da = (
            _regularized_lower_gamma(np.array(a + h), np.array(x))
            - _regularized_lower_gamma(np.array(a - h), np.array(x))
        ) / (2 * h)
        dp_dx = (
            _regularized_lower_gamma(np.array(a), np.array(x + h))
            - _regularized_lower_gamma(np.array(a), np.array(x - h))
        ) / (2 * h)
        assert 0 < level < 1
        np.testing.assert_allclose(
            standard_gamma_grad(np.array([x]), np.array([a])), -dp_da / dp_dx, rtol=1e-5
        )


def test_gamma_beta_dirichlet_rsample_gradients_are_unbiased():
    # d/d alpha E[x] = d/d alpha (alpha / rate) = 1 / rate, estimated from reparameterised samples
    alpha = _p([0.8, 3.0])
    D.Gamma(alpha, dt.tensor([2.0, 0.5], dtype=dt.float64)).rsample((20000,)).mean(0).sum().backward()
    np.testing.assert_allclose(alpha.grad.numpy(), [0.5, 2.0], rtol=0.05)
    c1, c0 = _p([2.0]), _p([3.0])
    D.Beta(c1, c0).rsample((20000,)).mean().backward()
    # E[x] = c1 / (c1 + c0): d/dc1 = c0 / (c1 + c0)^2 = 0.12, d/dc0 = -c1 / (c1 + c0)^2 = -0.08
    np.testing.assert_allclose([c1.grad.item(), c0.grad.item()], [0.12, -0.08], rtol=0.1)
    conc = _p([1.0, 2.0, 3.0])
    D.Dirichlet(conc).rsample((20000,))[:, 0].mean().backward()
    np.testing.assert_allclose(conc.grad.numpy(), [5 / 36, -1 / 36, -1 / 36], rtol=0.1, atol=0.005)


@pytest.mark.parametrize(
    "dist",
    [
        D.Normal(dt.tensor([1.0, -2.0]), dt.tensor([0.5, 2.0])),
        D.Gamma(dt.tensor([0.5, 4.0]), dt.tensor([1.0, 2.0])),
        D.Beta(dt.tensor([0.5, 4.0]), dt.tensor([2.0, 1.0])),
        D.Poisson(dt.tensor([0.5, 7.0])),
        D.Binomial(dt.tensor([5.0, 20.0]), probs=dt.tensor([0.3, 0.8])),
        D.Geometric(probs=dt.tensor([0.3, 0.8])),
        D.Bernoulli(probs=dt.tensor([0.3, 0.8])),
        D.Exponential(dt.tensor([0.5, 3.0])),
        D.Laplace(dt.tensor([0.5, 3.0]), dt.tensor([1.0, 0.2])),
        D.StudentT(dt.tensor([5.0, 9.0])),
        D.Chi2(dt.tensor([3.0, 6.0])),
        D.Categorical(probs=dt.tensor([0.2, 0.5, 0.3])),
        D.Dirichlet(dt.tensor([1.0, 2.0, 3.0])),
        D.MultivariateNormal(dt.tensor([1.0, -1.0]), covariance_matrix=dt.tensor([[2.0, 0.5], [0.5, 1.0]])),
        D.LowRankMultivariateNormal(dt.tensor([1.0, -1.0]), dt.tensor([[1.0], [0.5]]), dt.tensor([0.5, 0.2])),
        D.Uniform(dt.tensor([-1.0, 2.0]), dt.tensor([1.0, 5.0])),
    ],
    ids=lambda d: type(d).__name__,
)
def test_sample_statistics_match_the_moments(dist):
    dt.manual_seed(0)
    x = dist.sample((40000,)).double()
    if isinstance(dist, D.Categorical):
        freq = np.bincount(x.numpy().astype(int), minlength=3) / len(x)
        np.testing.assert_allclose(freq, dist.probs.numpy(), atol=0.01)
        return
    mean, var = dist.mean.numpy(), dist.variance.numpy()
    np.testing.assert_allclose(x.mean(0).numpy(), mean, atol=4 * np.sqrt(var.max() / 40000) + 1e-3)
    np.testing.assert_allclose(x.var(0).numpy(), var, rtol=0.06)
    assert tuple(x.shape) == (40000,) + tuple(dist.batch_shape) + tuple(dist.event_shape)
    if isinstance(dist, D.MultivariateNormal):
        np.testing.assert_allclose(np.cov(x.numpy().T), dist.covariance_matrix.numpy(), atol=0.05)


def test_sample_has_no_gradient_and_rsample_is_differentiable():
    loc = _p([0.0])
    d = D.Normal(loc, dt.tensor([1.0], dtype=dt.float64))
    assert not d.sample().requires_grad
    assert d.rsample().requires_grad
    assert D.Poisson(dt.tensor([1.0])).has_rsample is False
    with pytest.raises(NotImplementedError):
        D.Poisson(dt.tensor([1.0])).rsample()


def test_von_mises_samples_have_the_circular_moments():
    dt.manual_seed(0)
    d = D.VonMises(dt.tensor([0.5, -2.0], dtype=dt.float64), dt.tensor([5.0, 0.8], dtype=dt.float64))
    x = d.sample((40000,)).numpy()
    assert x.min() >= -np.pi and x.max() < np.pi
    np.testing.assert_allclose(np.angle(np.exp(1j * x).mean(0)), [0.5, -2.0], atol=0.03)
    np.testing.assert_allclose(1 - np.abs(np.exp(1j * x).mean(0)), d.variance.numpy(), atol=0.01)


def test_continuous_bernoulli_rsample_gradcheck_and_range():
    assert gradcheck(_seeded(lambda p: D.ContinuousBernoulli(probs=p)), (_p([0.2, 0.8]),))
    x = D.ContinuousBernoulli(probs=dt.tensor([0.3])).sample((1000,))
    assert float(x.min()) >= 0 and float(x.max()) <= 1
