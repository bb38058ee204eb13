"""The error function on NumPy arrays (NumPy has none), to the input dtype's precision.
The one erf of the package: ``torch.erf`` and the float64 exact GELU use it. Measured by
``benchmarks/kernels.py``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["erf", "TWO_OVER_SQRT_PI"]

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


_ERF_SERIES = tuple(1 / math.prod(range(1, 2 * n + 2, 2)) for n in range(32))  # 1 / (2n+1)!!


def erf(x: np.ndarray) -> np.ndarray:
    """The error function to the input dtype's precision, with whole-array NumPy steps.

    |x| < 2: the all-positive series erf(x) = 2/sqrt(pi) exp(-x^2) sum 2^n x^(2n+1) / (2n+1)!!
    (no cancellation). |x| >= 2: the continued fraction of erfc, evaluated from its tail.
    The number of terms is what float64 (or float32) rounding needs at |x| = 2.
    """
    n_series, n_fraction = (32, 40) if x.dtype == np.float64 else (20, 10)
    x64 = x.astype(np.float64)
    ax = np.abs(x64)
    out = np.empty_like(x64)
    small = ax < 2.0
    s = ax[small]
    if s.size:
        s2 = 2 * s * s
        total = np.full_like(s, _ERF_SERIES[n_series - 1])
        for c in _ERF_SERIES[n_series - 2 :: -1]:  # Horner's scheme, in place
            total *= s2
            total += c
        out[small] = TWO_OVER_SQRT_PI * np.exp(-s * s) * s * total
    big = ~small
    t_in = ax[big]
    if t_in.size:
        with np.errstate(over="ignore", invalid="ignore"):
            t = t_in.copy()
            for k in range(n_fraction, 0, -1):  # t = x + (k/2) / t, in place
                np.divide(k / 2, t, out=t)
                t += t_in
            erfc = np.exp(-t_in * t_in) / (math.sqrt(math.pi) * t)
        out[big] = np.where(np.isnan(t_in), np.nan, 1.0 - erfc)
    return (np.sign(x64) * out).astype(x.dtype, copy=False)
