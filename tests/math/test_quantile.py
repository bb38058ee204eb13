"""``quantile`` and ``nanquantile``: PyTorch's definition (sorted slices, ranks in the
input's dtype, ``lerp`` between neighbours), its shapes, checks and gradients."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck

rng = np.random.default_rng(7)
X = rng.standard_normal((4, 5, 6)).astype(np.float32)
XN = X.copy()
XN[0, 1, 2] = XN[2, :, 3] = np.nan
MODES = ["linear", "lower", "higher", "midpoint", "nearest"]
Q = np.array([0.0, 0.1, 0.25, 0.5, 0.7, 1.0], dtype=np.float32)


def test_values_and_modes_on_a_small_slice():
    x = dt.tensor([3.0, 1.0, 4.0, 2.0, 5.0])  # sorted 1 2 3 4 5, rank of 0.3 is 1.2 (float32)
    got = {m: dt.quantile(x, 0.3, interpolation=m).item() for m in MODES}
    assert got["lower"] == 2.0 and got["higher"] == 3.0 and got["nearest"] == 2.0
    assert got["midpoint"] == 2.5
    assert got["linear"] == np.float32(2.0) + (np.float32(0.3) * np.float32(4) - np.float32(1))
    assert dt.quantile(dt.tensor([1.0, np.nan, 3.0]), 0.5).isnan().item()
    assert dt.nanquantile(dt.tensor([1.0, np.nan, 3.0]), 0.5).item() == 2.0
    assert dt.nanquantile(dt.tensor([np.nan, np.nan]), 0.5).isnan().item()


def test_shapes():
    x = dt.tensor(X)
    q2 = dt.tensor([0.2, 0.9])
    assert dt.quantile(x, 0.5).shape == ()
    assert dt.quantile(x, q2).shape == (2,)
    assert dt.quantile(x, 0.5, keepdim=True).shape == (1, 1, 1)
    assert dt.quantile(x, q2, dim=1).shape == (2, 4, 6)
    assert dt.quantile(x, q2, dim=-1, keepdim=True).shape == (2, 4, 5, 1)
    assert dt.quantile(dt.tensor(3.0), q2, dim=0, keepdim=True).shape == (2,)


def test_gradient_goes_to_the_picked_elements():
    """Linear interpolation between the 2nd and 3rd smallest: weights 0.8 and 0.2; a quantile
    asked twice adds up (repeated picks accumulate)."""
    x = dt.tensor([0.3, -1.0, 2.0, 0.5, 0.4], requires_grad=True)
    dt.quantile(x, dt.tensor([0.3, 0.3])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.6, 0.0, 0.0, 0.0, 0.4], rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_gradcheck(mode):
    x = dt.tensor(rng.permutation(24).reshape(4, 6) + rng.uniform(0, 0.5, (4, 6)), requires_grad=True)
    q = dt.tensor([0.15, 0.5, 0.8], dtype=dt.float64)
    assert gradcheck(lambda t: dt.quantile(t, q, dim=1, interpolation=mode), (x,))
    xn = x.detach().clone()
    xn[1, 2] = np.nan
    xn.requires_grad_(True)
    assert gradcheck(lambda t: dt.nanquantile(t, q, dim=0, interpolation=mode), (xn,))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: dt.quantile(dt.tensor([1, 2]), 0.5), RuntimeError, "must be either float or double dtype"),
        (lambda: dt.quantile(dt.tensor([1.0]).to(dt.bfloat16), 0.5), RuntimeError, "float or double"),
        (lambda: dt.quantile(dt.empty(0), 0.5), RuntimeError, "input tensor must be non-empty"),
        (lambda: dt.quantile(dt.ones(3), dt.tensor([[0.5]])), RuntimeError, "scalar or 1D tensor"),
        (lambda: dt.quantile(dt.ones(3), dt.tensor([0.5], dtype=dt.float64)), RuntimeError, "same dtype"),
        (lambda: dt.quantile(dt.ones(3), 1.5), RuntimeError, r"range \[0, 1\] but got 1.5"),
        (lambda: dt.quantile(dt.ones(3), dt.tensor([0.1, -0.2])), RuntimeError, "q values must be"),
        (lambda: dt.quantile(dt.ones(3), 0.5, interpolation="cubic"), RuntimeError, "but got cubic"),
        (lambda: dt.quantile(dt.ones(3), [0.5]), TypeError, "q must be a float or a Tensor"),
        (lambda: dt.quantile(dt.ones(3), 0.5, dim=1), IndexError, "Dimension out of range"),
    ],
)
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parity
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
def test_bits_and_gradients_match_pytorch(torch, fn, mode):
    for dim, keepdim in [(None, False), (None, True), (0, False), (1, True), (-1, False)]:
        for q in (0.3, Q):
            got = {}
            for lib in (dt, torch):
                x = lib.tensor(XN if fn == "nanquantile" else X, requires_grad=True)
                qq = lib.tensor(q) if isinstance(q, np.ndarray) else q
                y = getattr(lib, fn)(x, qq, dim=dim, keepdim=keepdim, interpolation=mode)
                y.nan_to_num().sum().backward()
                got[lib] = (y.detach().numpy(), x.grad.numpy())
            (yo, go), (yt, gt) = got[dt], got[torch]
            assert yo.shape == yt.shape and yo.dtype == yt.dtype
            np.testing.assert_array_equal(yo, yt)
            np.testing.assert_allclose(go, gt, rtol=1e-6, atol=1e-7)
