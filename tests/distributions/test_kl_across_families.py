"""KL divergences between families (the pairs torch.distributions.kl answers): infinite
where p's support leaves q's, closed forms from p's moments elsewhere; and sampling: a bare
int ``sample_shape`` refused as PyTorch's, distributions of a number sampled (0-d)."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck

D = dt.distributions


def _pairs(L):
    t = lambda v: L.tensor(v, dtype=L.float64)  # noqa: E731
    Dl = L.distributions
    return {
        "Normal": Dl.Normal(t([0.0, 1.0]), t([1.0, 2.0])),
        "Beta": Dl.Beta(t([0.5, 2.0]), t([1.5, 3.0])),
        "Gamma": Dl.Gamma(t([0.5, 2.0]), t([1.5, 3.0])),
        "Exponential": Dl.Exponential(t([0.5, 2.0])),
        "Uniform": Dl.Uniform(t([0.1, 0.5]), t([0.9, 2.0])),
        "Laplace": Dl.Laplace(t([0.0, 1.0]), t([1.0, 2.0])),
        "Gumbel": Dl.Gumbel(t([0.0, 1.0]), t([1.0, 2.0])),
        "ContinuousBernoulli": Dl.ContinuousBernoulli(probs=t([0.2, 0.9])),
        "Pareto": Dl.Pareto(t([1.0, 0.5]), t([1.0, 2.5])),
        "Bernoulli": Dl.Bernoulli(probs=t([0.2, 1.0])),
        "Poisson": Dl.Poisson(t([0.5, 2.0])),
        "Binomial": Dl.Binomial(5, probs=t([0.2, 0.9])),
    }


def test_kl_across_families_as_pytorch(torch):
    ours, theirs = _pairs(dt), _pairs(torch)
    checked = 0
    for a in ours:
        for b in ours:
            try:
                want = torch.distributions.kl_divergence(theirs[a], theirs[b]).numpy()
            except NotImplementedError:
                continue
            got = D.kl_divergence(ours[a], ours[b])
            assert got.shape == want.shape, (a, b)
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-9, err_msg=f"KL({a} || {b})")
            checked += 1
    assert checked > 60


def test_kl_to_normal_by_quadrature():
    p, q = D.Beta(dt.tensor(2.0, dtype=dt.float64), dt.tensor(3.0, dtype=dt.float64)), D.Normal(0.5, 0.7)
    x = np.linspace(1e-9, 1 - 1e-9, 200001)
    lp = p.log_prob(dt.tensor(x)).numpy()
    lq = q.log_prob(dt.tensor(x)).numpy()
    want = np.trapezoid(np.exp(lp) * (lp - lq), x)
    assert D.kl_divergence(p, q).item() == pytest.approx(want, rel=1e-6)


def test_kl_across_families_gradcheck():
    conc = dt.tensor([0.7, 2.0], dtype=dt.float64, requires_grad=True)
    loc = dt.tensor([0.3, -1.0], dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda c, m: D.kl_divergence(D.Gamma(c, 1.5), D.Gumbel(m, 2.0)), (conc, loc))


def test_sample_shape_must_be_a_sequence():
    d = D.Normal(dt.zeros(2), dt.ones(2))
    with pytest.raises(TypeError, match="'int' object is not iterable"):
        d.sample(5)
    assert d.sample((5,)).shape == (5, 2) and d.rsample([3]).shape == (3, 2)


def test_bernoulli_of_a_number_samples(torch):
    torch.manual_seed(3)
    dt.manual_seed(3)
    want = [torch.distributions.Bernoulli(0.3).sample().item() for _ in range(8)]
    assert [D.Bernoulli(0.3).sample().item() for _ in range(8)] == want  # (a 0-d probs drew nothing)
    assert D.Poisson(2.0).sample().shape == ()  # (was (1,))


def test_negative_concentration_without_validation_samples_as_pytorch():
    """PyTorch's kernel draws NaN for alpha < 0 (C's sqrt of a negative) and clamps it to the
    smallest normal number; disttorch raised math's ValueError."""
    dt.manual_seed(0)
    draws = dt._standard_gamma(dt.tensor([0.5, -2.0, 0.0]))
    assert draws[1].item() == draws[2].item() == np.finfo(np.float32).tiny
    sample = D.Dirichlet(dt.tensor([0.5, -2.0, 1.0]), validate_args=False).sample()
    assert sample[1].item() == np.finfo(np.float32).tiny
