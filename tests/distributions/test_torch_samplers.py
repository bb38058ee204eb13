"""PyTorch's sequential samplers, step for step: ``_standard_gamma``, ``_sample_dirichlet``,
``binomial`` and the distributions built on them give PyTorch's numbers for a seed, and
leave the generator where PyTorch leaves it (the draws consumed, the cached normal)."""

import warnings

import numpy as np
import pytest

import disttorch as dt

D = dt.distributions


def test_known_answers_of_pytorch_2_13():
    """Values PyTorch 2.13 gives for these calls after ``manual_seed(5)`` (then ``rand(2)``,
    which shows the generator was left where PyTorch leaves it)."""
    dt.manual_seed(5)
    alpha = [0.3, 1.0, 2.5, 9.0]
    assert dt._standard_gamma(dt.tensor(alpha)).tolist() == [
        0.029668617993593216, 1.7731961011886597, 3.535667657852173, 5.911088466644287,
    ]  # fmt: skip
    assert dt.rand(2).tolist() == [0.05663388967514038, 0.9201117157936096]
    dt.manual_seed(5)
    assert dt._standard_gamma(dt.tensor(alpha, dtype=dt.float64)).tolist() == [
        0.029668617901482564, 1.7731961540419523, 3.5356675485967957, 5.91108807319167,
    ]  # fmt: skip
    dt.manual_seed(5)
    assert dt._sample_dirichlet(dt.tensor([[0.5, 1.5, 3.0]])).tolist() == [
        [0.020782068371772766, 0.3687189221382141, 0.6104990243911743]
    ]
    dt.manual_seed(5)
    counts, probs = dt.tensor([8.0, 40.0, 40.0, 3.0]), dt.tensor([0.2, 0.35, 0.8, 0.9])
    assert dt.binomial(counts, probs).tolist() == [1.0, 13.0, 30.0, 3.0]
    assert dt.rand(2).tolist() == [0.044166386127471924, 0.4884120225906372]


def test_gamma_edges_and_generators():
    assert dt._standard_gamma(dt.tensor([0.0])).item() == np.finfo(np.float32).tiny
    g1, g2 = dt.Generator().manual_seed(3), dt.Generator().manual_seed(3)
    a = dt._standard_gamma(dt.full((50,), 0.7), generator=g1)
    assert a.tolist() == dt._standard_gamma(dt.full((50,), 0.7), generator=g2).tolist()
    with pytest.raises(NotImplementedError, match="\"gamma_cpu\" not implemented for 'Half'"):
        dt._standard_gamma(dt.ones(2, dtype=dt.float16))
    x = dt._sample_dirichlet(dt.tensor([[0.01, 0.01, 50.0]] * 20, dtype=dt.float32))
    assert bool((x > 0).all()) and bool((x < 1).all())


def test_statistics():
    dt.manual_seed(0)
    draws = dt._standard_gamma(dt.full((20000,), 0.4, dtype=dt.float64)).numpy()
    assert abs(draws.mean() - 0.4) < 0.02 and abs(draws.var() - 0.4) < 0.05
    b = dt.binomial(dt.full((20000,), 60.0), dt.full((20000,), 0.3)).numpy()  # BTRS
    assert abs(b.mean() - 18) < 0.2 and abs(b.var() - 12.6) < 0.8
    b = dt.binomial(dt.full((20000,), 9.0), dt.full((20000,), 0.85)).numpy()  # count - inversion
    assert abs(b.mean() - 7.65) < 0.05


def _samples(lib, seed):
    """Draws of each distribution that uses these samplers, in one stream."""
    lib.manual_seed(seed)
    T = lambda v, d=lib.float64: lib.tensor(v, dtype=d)  # noqa: E731
    Dl = lib.distributions
    out = {
        "gamma32": Dl.Gamma(T([0.4, 3.0], lib.float32), T([1.0, 2.0], lib.float32)).rsample((3,)),
        "gamma64": Dl.Gamma(T([0.4, 3.0]), T([1.0, 2.0])).sample((3,)),
        "beta": Dl.Beta(T([0.5, 2.0]), T([1.5, 0.3])).rsample((4,)),
        "dirichlet32": Dl.Dirichlet(T([[0.2, 1.0, 4.0]], lib.float32)).rsample((3,)),
        "chi2": Dl.Chi2(T([3.0, 0.5])).sample((3,)),
        "student_t": Dl.StudentT(T([2.5]), T([0.0]), T([1.0])).rsample((3,)),
        "fisher": Dl.FisherSnedecor(T([3.0]), T([5.0])).sample((3,)),
        "binomial32": Dl.Binomial(T([12.0, 60.0, 5.0], lib.float32), T([0.4, 0.6, 0.95], lib.float32)).sample(
            (4,)
        ),
        "binomial64": lib.binomial(T([30.0, 1000.0, 2.0]), T([0.5, 0.01, 0.3])),
        "neg_binomial": Dl.NegativeBinomial(T([5.0]), T([0.3])).sample((3,)),
        "von_mises": Dl.VonMises(T([0.5, -2.0]), T([2.0, 0.01])).sample((3,)),
        "lkj": Dl.LKJCholesky(3, T(1.5)).sample((2,)),
        "wishart": Dl.Wishart(T([4.0, 6.0]), covariance_matrix=T([[2.0, 0.3], [0.3, 1.0]])).rsample((2,)),
        "after": lib.rand(3, dtype=lib.float64),
    }
    return {k: v.detach().numpy() for k, v in out.items()}


@pytest.mark.parity
def test_samples_match_pytorch(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Wishart's "Singular sample detected.", as PyTorch's
        for seed in (0, 1, 2):
            ours, theirs = _samples(dt, seed), _samples(torch, seed)
            for name in theirs:
                np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-12, atol=1e-12, err_msg=name)


def _exponential_family_samples(lib):
    """Draws of the distributions built on ``exponential_``/``cauchy_``, each after a seed."""
    draws = []
    for make in (
        lambda D: D.Exponential(lib.tensor([1.0, 2.0])).rsample((3,)),
        lambda D: D.Pareto(1.0, 2.0).sample((3,)),
        lambda D: D.Weibull(1.0, 2.0).sample((3,)),
        lambda D: D.Cauchy(0.5, 2.0).rsample((3,)),
        lambda D: D.HalfCauchy(2.0).sample((3,)),
    ):
        lib.manual_seed(7)
        draws.append(make(lib.distributions).tolist())
    return draws


def test_exponential_and_cauchy_draw_from_the_tensor_samplers():
    """``Exponential`` divides ``exponential_()`` draws by the rate and ``Cauchy`` scales
    ``cauchy_()`` draws, as PyTorch's do, so a seed gives the samplers' numbers."""
    dt.manual_seed(7)
    unit = dt.empty(2, 2).exponential_()
    dt.manual_seed(7)
    assert dt.allclose(D.Exponential(dt.tensor([1.0, 4.0])).rsample((2,)), unit / dt.tensor([1.0, 4.0]))
    dt.manual_seed(7)
    eps = dt.empty(3).cauchy_()
    dt.manual_seed(7)
    assert dt.allclose(D.Cauchy(1.0, 3.0).sample((3,)), 1.0 + eps * 3.0)


def test_exponential_family_samples_match_pytorch(torch):
    """The same draws (the transforms' ``exp``/``pow`` may differ in the last bit)."""
    for ours, theirs in zip(_exponential_family_samples(dt), _exponential_family_samples(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
