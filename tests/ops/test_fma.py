"""``kernels/fma.py``: ``a * b + c`` rounded once, checked against exact rational arithmetic
(no PyTorch needed)."""

from fractions import Fraction

import numpy as np
import pytest

from disttorch.kernels.fma import fma

rng = np.random.default_rng(3)


def _exact(a, b, c, dtype):
    return np.array(
        [float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))) for x, y, z in zip(a, b, c)]
    ).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rounds_once(dtype):
    """Random magnitudes, and ``c = -a*b`` where the unfused sum keeps only the product's
    rounding error (the fused one gives that error exactly)."""
    a, b, c = (rng.standard_normal(3000) * 10.0 ** rng.integers(-6, 6, 3000) for _ in range(3))
    a, b, c = (v.astype(dtype) for v in (a, b, c))
    for addend in (c, -(a * b)):
        got = fma(a, b, addend)
        assert got.dtype == dtype
        assert np.array_equal(got, _exact(a, b, addend, dtype))
    assert np.count_nonzero(fma(a, b, -(a * b))) > 1000  # the unfused sum would be all zeros


def test_special_values_and_scalars():
    a = np.array([np.inf, np.nan, 1e308, 2.0])
    out = fma(a, np.array([2.0, 1.0, 10.0, 3.0]), np.array([1.0, 1.0, 0.0, 0.5]))
    assert np.isinf(out[0]) and np.isnan(out[1]) and np.isinf(out[2]) and out[3] == 6.5
    assert fma(np.float32(0.1), np.float32(3.0), np.float32(-0.3)).dtype == np.float32
