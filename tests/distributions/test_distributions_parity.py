"""Distributions against PyTorch: log_prob, entropy, moments, cdf/icdf and KL divergences
in float64 on the same parameters and values."""

import numpy as np
import pytest

import disttorch as dt
from disttorch import distributions as D

RNG = np.random.default_rng(7)


def _pos(*shape):
    return RNG.uniform(0.5, 3.0, shape)


def _real(*shape):
    return RNG.standard_normal(shape)


def _spd(n, batch=()):
    m = RNG.standard_normal(batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def _probs(*shape):
    p = RNG.uniform(0.1, 1.0, shape)
    return p / p.sum(-1, keepdims=True)


LOWRANK = (_real(2, 3), _real(2, 3, 2), _pos(2, 3))
SPD = _spd(3, (2,))

# name: (constructor name, args as numpy, value sampler from the torch distribution, extra kwargs)
CASES = {
    "Normal": ("Normal", (_real(4), _pos(4)), {}),
    "Uniform": ("Uniform", (-_pos(4), _pos(4)), {}),
    "Exponential": ("Exponential", (_pos(4),), {}),
    "Laplace": ("Laplace", (_real(4), _pos(4)), {}),
    "Cauchy": ("Cauchy", (_real(4), _pos(4)), {}),
    "Gamma": ("Gamma", (_pos(4), _pos(4)), {}),
    "Chi2": ("Chi2", (_pos(4),), {}),
    "Beta": ("Beta", (_pos(4), _pos(4)), {}),
    "Dirichlet": ("Dirichlet", (_pos(2, 4),), {}),
    "StudentT": ("StudentT", (_pos(4) + 2, _real(4), _pos(4)), {}),
    "LogNormal": ("LogNormal", (_real(4), _pos(4)), {}),
    "HalfNormal": ("HalfNormal", (_pos(4),), {}),
    "Bernoulli-probs": ("Bernoulli", (), {"probs": RNG.uniform(0.1, 0.9, 4)}),
    "Bernoulli-logits": ("Bernoulli", (), {"logits": _real(4)}),
    "Categorical-probs": ("Categorical", (), {"probs": _probs(3, 5)}),
    "Categorical-logits": ("Categorical", (), {"logits": _real(3, 5)}),
    "OneHotCategorical": ("OneHotCategorical", (), {"probs": _probs(3, 5)}),
    "Poisson": ("Poisson", (_pos(4) * 3,), {}),
    "Binomial": ("Binomial", (np.full(4, 10.0),), {"probs": RNG.uniform(0.1, 0.9, 4)}),
    "Binomial-logits": ("Binomial", (np.full(4, 7.0),), {"logits": _real(4)}),
    "Geometric": ("Geometric", (), {"probs": RNG.uniform(0.1, 0.9, 4)}),
    "MultivariateNormal-cov": ("MultivariateNormal", (_real(2, 3),), {"covariance_matrix": SPD}),
    "MultivariateNormal-prec": ("MultivariateNormal", (_real(2, 3),), {"precision_matrix": SPD}),
    "MultivariateNormal-tril": ("MultivariateNormal", (_real(3),), {"scale_tril": np.linalg.cholesky(SPD)}),
    "LowRankMultivariateNormal": ("LowRankMultivariateNormal", LOWRANK, {}),
    "RelaxedBernoulli": ("RelaxedBernoulli", (np.array(0.7),), {"probs": RNG.uniform(0.1, 0.9, 4)}),
    "RelaxedOneHotCategorical": ("RelaxedOneHotCategorical", (np.array(0.5),), {"logits": _real(3, 4)}),
    "Gumbel": ("Gumbel", (_real(4), _pos(4)), {}),
    "HalfCauchy": ("HalfCauchy", (_pos(4),), {}),
    "InverseGamma": ("InverseGamma", (_pos(4) + 2, _pos(4)), {}),
    "Kumaraswamy": ("Kumaraswamy", (_pos(4) + 1, _pos(4) + 1), {}),
    "Pareto": ("Pareto", (_pos(4), _pos(4) + 2), {}),
    "Weibull": ("Weibull", (_pos(4), _pos(4) + 1), {}),
    "LogisticNormal": ("LogisticNormal", (_real(2, 3), _pos(2, 3)), {}),
    "NegativeBinomial": ("NegativeBinomial", (_pos(4) * 3,), {"probs": RNG.uniform(0.1, 0.9, 4)}),
    "FisherSnedecor": ("FisherSnedecor", (_pos(4) + 4, _pos(4) + 4), {}),
    "VonMises": ("VonMises", (_real(6), np.array([0.5, 2.0, 3.7, 3.8, 10.0, 50.0])), {}),
    "ContinuousBernoulli": ("ContinuousBernoulli", (), {"probs": np.array([0.1, 0.4995, 0.5, 0.7, 0.95])}),
}


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _build(lib, name, args, kwargs):
    cls = getattr(lib.distributions, name)
    a = [lib.tensor(np.array(x), dtype=lib.float64) for x in args]
    k = {key: lib.tensor(np.array(v), dtype=lib.float64) for key, v in kwargs.items()}
    return cls(*a, **k)


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(a, b, rtol=1e-9, atol=1e-10):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


@pytest.mark.parity
@pytest.mark.parametrize("case", list(CASES))
def test_log_prob_entropy_and_moments_match_pytorch(torch, case):
    name, args, kwargs = CASES[case]
    torch.manual_seed(0)
    theirs = _build(torch, name, args, kwargs)
    ours = _build(dt, name, args, kwargs)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    values = theirs.sample((5,))
    _close(ours.log_prob(dt.tensor(values.numpy())), theirs.log_prob(values), rtol=1e-8)
    for prop in ("mean", "variance", "stddev", "mode"):
        try:
            expected = getattr(theirs, prop)
        except NotImplementedError:
            continue
        _close(getattr(ours, prop), expected)
    try:
        expected = theirs.entropy()
    except NotImplementedError:
        expected = None
    if expected is not None:
        _close(ours.entropy(), expected, rtol=1e-8)
    if name in (
        "Normal",
        "Uniform",
        "Exponential",
        "Laplace",
        "Cauchy",
        "HalfNormal",
        "LogNormal",
        "HalfCauchy",
        "Gumbel",
        "Pareto",
        "Weibull",
        "Kumaraswamy",
        "ContinuousBernoulli",
    ):
        _close(ours.cdf(dt.tensor(values.numpy())), theirs.cdf(values))
        q = torch.tensor(RNG.uniform(0.05, 0.95, tuple(values.shape)), dtype=torch.float64)
        _close(ours.icdf(dt.tensor(q.numpy())), theirs.icdf(q), rtol=1e-8)
    if name == "Gamma":
        _close(
            ours.cdf(dt.tensor(values.numpy())),
            torch.special.gammainc(theirs.concentration, theirs.rate * values),
            rtol=1e-8,
        )
    if theirs.has_enumerate_support:
        _close(ours.enumerate_support(), theirs.enumerate_support())
        _close(ours.enumerate_support(expand=False), theirs.enumerate_support(expand=False))


@pytest.mark.parity
@pytest.mark.parametrize(
    "case",
    [
        "Normal",
        "Gamma",
        "Dirichlet",
        "MultivariateNormal-cov",
        "Categorical-logits",
        "StudentT",
        "LowRankMultivariateNormal",
        "Beta",
    ],
)
def test_expand_matches_pytorch(torch, case):
    name, args, kwargs = CASES[case]
    theirs = _build(torch, name, args, kwargs)
    ours = _build(dt, name, args, kwargs)
    shape = (2,) + tuple(theirs.batch_shape)
    te, oe = theirs.expand(shape), ours.expand(shape)
    assert tuple(oe.batch_shape) == tuple(te.batch_shape) and tuple(oe.event_shape) == tuple(te.event_shape)
    values = te.sample()
    _close(oe.log_prob(dt.tensor(values.numpy())), te.log_prob(values), rtol=1e-8)
    assert tuple(oe.sample((3,)).shape) == tuple(te.sample((3,)).shape)


KL_PAIRS = [
    ("Normal", "Normal"),
    ("Bernoulli-probs", "Bernoulli-logits"),
    ("Categorical-probs", "Categorical-logits"),
    ("Beta", "Beta"),
    ("Gamma", "Gamma"),
    ("Dirichlet", "Dirichlet"),
    ("Exponential", "Exponential"),
    ("Laplace", "Laplace"),
    ("Poisson", "Poisson"),
    ("Geometric", "Geometric"),
    ("Cauchy", "Cauchy"),
    ("MultivariateNormal-cov", "MultivariateNormal-prec"),
    ("HalfNormal", "HalfNormal"),
    ("LogNormal", "LogNormal"),
    ("OneHotCategorical", "OneHotCategorical"),
    ("Uniform", "Uniform"),
    ("Binomial", "Binomial"),
    ("Exponential", "Gamma"),
    ("Gamma", "Exponential"),
    ("Uniform", "Normal"),
    ("Normal", "Laplace"),
    ("Beta", "Uniform"),
    ("LowRankMultivariateNormal", "LowRankMultivariateNormal"),
]


def _other(case):
    """The same family with other parameters (fresh draws of the same shapes)."""
    name, args, kwargs = CASES[case]
    new_args = tuple(
        a
        if a.ndim == 0 or (a == np.round(a)).all()
        else (RNG.uniform(0.5, 3.0, a.shape) if (a > 0).all() else RNG.standard_normal(a.shape))
        for a in args
    )
    new_kwargs = {}
    for k, v in kwargs.items():
        if k in ("covariance_matrix", "precision_matrix"):
            new_kwargs[k] = _spd(v.shape[-1], v.shape[:-2])
        elif k == "probs":
            new_kwargs[k] = _probs(*v.shape) if v.ndim > 1 else RNG.uniform(0.1, 0.9, v.shape)
        else:
            new_kwargs[k] = RNG.standard_normal(v.shape)
    return name, new_args, new_kwargs


@pytest.mark.parity
@pytest.mark.parametrize("p_case,q_case", KL_PAIRS)
def test_kl_divergence_matches_pytorch(torch, p_case, q_case):
    p_spec = CASES[p_case]
    q_spec = _other(q_case) if p_case == q_case else CASES[q_case]
    if (p_case, q_case) == ("Uniform", "Uniform"):
        q_spec = ("Uniform", (p_spec[1][0] - 0.5, p_spec[1][1] + 0.5), {})
    if (p_case, q_case) == ("Beta", "Uniform"):
        q_spec = ("Uniform", (np.full(4, -0.5), np.full(4, 1.5)), {})
    expected = torch.distributions.kl_divergence(_build(torch, *p_spec), _build(torch, *q_spec))
    ours = D.kl_divergence(_build(dt, *p_spec), _build(dt, *q_spec))
    _close(ours, expected, rtol=1e-8)


@pytest.mark.parity
def test_mixture_same_family_matches_pytorch(torch):
    logits, loc, scale = _real(3, 4), _real(3, 4, 2), _pos(3, 4, 2)
    theirs = torch.distributions.MixtureSameFamily(
        torch.distributions.Categorical(logits=torch.tensor(logits)),
        torch.distributions.Independent(
            torch.distributions.Normal(torch.tensor(loc), torch.tensor(scale)), 1
        ),
    )
    ours = D.MixtureSameFamily(
        D.Categorical(logits=dt.tensor(logits)), D.Independent(D.Normal(dt.tensor(loc), dt.tensor(scale)), 1)
    )
    values = theirs.sample((5,))
    _close(ours.log_prob(dt.tensor(values.numpy())), theirs.log_prob(values))
    _close(ours.mean, theirs.mean)
    _close(ours.variance, theirs.variance)
    assert tuple(ours.sample((5,)).shape) == tuple(values.shape)
    assert ours.support.check(dt.tensor(values.numpy())).tolist() == theirs.support.check(values).tolist()
    uni_t = torch.distributions.MixtureSameFamily(
        torch.distributions.Categorical(logits=torch.tensor(logits)),
        torch.distributions.Normal(torch.tensor(loc[..., 0]), torch.tensor(scale[..., 0])),
    )
    uni_o = D.MixtureSameFamily(
        D.Categorical(logits=dt.tensor(logits)), D.Normal(dt.tensor(loc[..., 0]), dt.tensor(scale[..., 0]))
    )
    x = uni_t.sample((2,))
    _close(uni_o.cdf(dt.tensor(x.numpy())), uni_t.cdf(x))


@pytest.mark.parity
def test_transformed_distribution_matches_pytorch(torch):
    loc, scale, xs = _real(3), _pos(3), RNG.uniform(0.1, 0.9, (4, 3))
    out = []
    for lib in (dt, torch):
        T = lib.distributions.transforms
        base = lib.distributions.Normal(lib.tensor(loc), lib.tensor(scale))
        d = lib.distributions.TransformedDistribution(
            base, [T.AffineTransform(1.0, lib.tensor(scale)), T.SigmoidTransform()]
        )
        x = lib.tensor(xs)
        out.append((d.log_prob(x), d.cdf(x), d.icdf(x)))
    for a, b in zip(*out):
        _close(a, b, rtol=1e-8)


@pytest.mark.parity
def test_multinomial_matches_pytorch(torch):
    probs = _probs(2, 4)
    theirs = torch.distributions.Multinomial(6, probs=torch.tensor(probs))
    ours = D.Multinomial(6, probs=dt.tensor(probs))
    values = theirs.sample((5,))
    _close(ours.log_prob(dt.tensor(values.numpy())), theirs.log_prob(values))
    _close(ours.entropy(), theirs.entropy(), rtol=1e-7)  # PyTorch takes lgamma(n + 1) in float32 here
    _close(ours.mean, theirs.mean)
    _close(ours.variance, theirs.variance)
    s = ours.sample((7,))
    assert tuple(s.shape) == (7, 2, 4) and bool((s.sum(-1) == 6).all())


def test_one_hot_straight_through_passes_gradients_to_probs():
    probs = dt.tensor([0.2, 0.3, 0.5], dtype=dt.float64, requires_grad=True)
    d = D.OneHotCategoricalStraightThrough(probs=probs)
    sample = d.rsample((4,))
    assert bool(((sample.detach() == 0) | (sample.detach() == 1)).all())
    (sample * dt.tensor([1.0, 2.0, 3.0], dtype=dt.float64)).sum().backward()
    assert probs.grad is not None and bool((probs.grad.abs() > 0).any())


@pytest.mark.parity
def test_generalized_pareto_matches_pytorch_in_float32(torch):
    # (PyTorch's GeneralizedPareto compares with a float32 zero tensor, so it runs in float32 only)
    loc, scale, conc = _real(4), _pos(4), np.array([-0.3, 0.0, 0.2, 0.7])
    theirs = torch.distributions.GeneralizedPareto(
        *(torch.tensor(a, dtype=torch.float32) for a in (loc, scale, conc))
    )
    ours = D.GeneralizedPareto(*(dt.tensor(a, dtype=dt.float32) for a in (loc, scale, conc)))
    values = theirs.sample((5,))
    q = torch.rand(5, 4)
    for a, b in [
        (ours.log_prob(dt.tensor(values.numpy())), theirs.log_prob(values)),
        (ours.cdf(dt.tensor(values.numpy())), theirs.cdf(values)),
        (ours.icdf(dt.tensor(q.numpy())), theirs.icdf(q)),
        (ours.entropy(), theirs.entropy()),
        (ours.mean, theirs.mean),
        (ours.variance, theirs.variance),
    ]:
        _close(a, b, rtol=2e-5, atol=1e-5)


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore:Singular sample detected")  # PyTorch's own sampler's notice
@pytest.mark.parametrize("kw", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_matches_pytorch(torch, kw):
    mat = np.linalg.cholesky(SPD) if kw == "scale_tril" else SPD
    df = np.array([4.5, 7.0])
    theirs = torch.distributions.Wishart(torch.tensor(df), **{kw: torch.tensor(mat)})
    ours = D.Wishart(dt.tensor(df), **{kw: dt.tensor(mat)})
    values = theirs.sample((4,))
    _close(ours.log_prob(dt.tensor(values.numpy())), theirs.log_prob(values))
    for prop in ("mean", "variance", "mode"):
        _close(getattr(ours, prop), getattr(theirs, prop))
    _close(ours.entropy(), theirs.entropy())
    dt.manual_seed(0)
    torch.manual_seed(0)
    samples = ours.rsample((2000,)).numpy()  # PyTorch's draws, its redraws included
    np.testing.assert_allclose(samples, theirs.rsample((2000,)).numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(samples.mean(0), ours.mean.numpy(), rtol=0.1, atol=0.5)


@pytest.mark.parity
def test_lkj_cholesky_matches_pytorch(torch):
    conc = np.array([0.5, 2.0])
    theirs = torch.distributions.LKJCholesky(3, torch.tensor(conc))
    ours = D.LKJCholesky(3, dt.tensor(conc))
    values = theirs.sample((4,))
    _close(ours.log_prob(dt.tensor(values.numpy())), theirs.log_prob(values))
    dt.manual_seed(0)
    s = ours.sample((4000,)).numpy()
    assert bool(D.constraints.corr_cholesky.check(dt.tensor(s)).all())
    corr = s @ np.swapaxes(s, -1, -2)
    reference = (lambda t: (t @ t.mT).numpy())(theirs.sample((4000,)))
    np.testing.assert_allclose(corr[..., 0, 1].var(0), reference[..., 0, 1].var(0), rtol=0.15)
