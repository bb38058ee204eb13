"""The special functions the distributions use (disttorch/ops/special.py): values vs
PyTorch, float64 gradcheck, poles and domains."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck
from disttorch.ops import special as S

X = np.concatenate([np.linspace(-4.7, -0.2, 10), np.linspace(0.01, 3, 25), np.geomspace(3, 1e5, 10)])


@pytest.mark.parity
@pytest.mark.parametrize("name", ["lgamma", "digamma", "trigamma", "polygamma3", "erfinv"])
def test_values_match_pytorch(name):
    torch = pytest.importorskip("torch")
    x = np.linspace(-0.999, 0.999, 101) if name == "erfinv" else X
    if name == "polygamma3":
        x = x[x > 0]
    ours = {
        "lgamma": S.lgamma,
        "digamma": S.digamma,
        "trigamma": lambda t: S.polygamma(1, t),
        "polygamma3": lambda t: S.polygamma(3, t),
        "erfinv": S.erfinv,
    }[name](dt.tensor(x)).numpy()
    theirs = {
        "lgamma": torch.lgamma,
        "digamma": torch.digamma,
        "trigamma": lambda t: torch.polygamma(1, t),
        "polygamma3": lambda t: torch.polygamma(3, t),
        "erfinv": torch.erfinv,
    }[name](torch.tensor(x)).numpy()
    # PyTorch's trigamma is accurate to ~1e-9 (ours to ~1e-14, checked against a direct sum)
    np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-10)
    f32 = {"lgamma": S.lgamma, "digamma": S.digamma, "erfinv": S.erfinv}.get(name)
    if f32 is not None:
        assert f32(dt.tensor(x, dtype=dt.float32)).dtype == dt.float32


@pytest.mark.parametrize(
    "fn",
    [S.lgamma, S.digamma, lambda t: S.polygamma(1, t), S.erfinv],
    ids=["lgamma", "digamma", "trigamma", "erfinv"],
)
def test_gradcheck_and_second_order(fn):
    x = dt.tensor(
        [0.3, 0.45, 0.7] if fn is S.erfinv else [0.3, 1.7, 4.2, -1.5], dtype=dt.float64, requires_grad=True
    )
    assert gradcheck(fn, (x,))
    assert dt.autograd.gradgradcheck(fn, (x,))


def test_poles_and_domain():
    assert S.lgamma(dt.tensor([0.0, -2.0])).tolist() == [float("inf")] * 2
    d = S.digamma(dt.tensor([0.0, -1.0])).tolist()
    assert d[0] == float("-inf") and np.isnan(d[1])
    e = S.erfinv(dt.tensor([1.0, -1.0, 2.0])).tolist()
    assert e[:2] == [float("inf"), float("-inf")] and np.isnan(e[2])
    assert S.polygamma(0, dt.tensor([1.0])).item() == pytest.approx(-0.5772156649015329)
    with pytest.raises(RuntimeError, match="negative n"):
        S.polygamma(-1, dt.tensor([1.0]))


def test_multivariate_normal_of_mismatched_sizes_fails_where_pytorchs_does():
    """A matrix whose size is not loc's is taken (as PyTorch takes it); sampling fails."""
    D = dt.distributions
    for kw in ({"covariance_matrix": dt.eye(2)}, {"scale_tril": dt.eye(2)}, {"precision_matrix": dt.eye(2)}):
        m = D.MultivariateNormal(dt.zeros(3), **kw)
        assert (
            m.event_shape == (3,) and m.batch_shape == () and list(m.__dict__[next(iter(kw))].shape) == [2, 2]
        )
    with pytest.raises(RuntimeError):
        D.MultivariateNormal(dt.zeros(3), covariance_matrix=dt.eye(2)).sample()
    with pytest.raises(ValueError, match="^covariance_matrix must be at least two-dimensional"):
        D.MultivariateNormal(dt.zeros(2), covariance_matrix=dt.ones(2))
    assert repr(D.Normal(dt.zeros(1), dt.ones(1))) == "Normal(loc: tensor([0.]), scale: tensor([1.]))"
