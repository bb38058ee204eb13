"""Compiled loops of :mod:`disttorch.kernels.vml` (numba, the ``fast`` extra): float32 ``log``,
``tanh``, ``sin`` and ``cos`` computed in float64 and rounded once, without NumPy's float64
passes.

Each loop reduces its argument with integer and float64 steps that vectorise and sums a
short series whose error (below 2^-45 relative) is far under a float32 unit, so the result
is the float64 function's value rounded once: the same bits as ``f(x.astype(float64))
.astype(float32)``, at some 2.5x NumPy's float32 loop instead of 4-20x.

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

import math

import numpy as np

from .jit import njit

__all__ = ["cos", "log", "sin", "tanh"]

_LN2_HI = 0.6931471803691238  # ln 2's leading 33 bits: k * _LN2_HI is exact for |k| < 2^20
_LN2_LO = 1.9082149292705877e-10  # the rest of ln 2
_F32_NORMAL, _F32_INF = np.int32(0x00800000), np.int32(0x7F800000)  # bits of the least normal, inf


@njit(numpy_division=True)
def log(bits, x, out):  # pragma: no cover - compiled
    """``log`` of float32 ``x`` (``bits``: the same array viewed as int32): ``x = 2^k m`` with
    ``m`` in [sqrt(1/2), sqrt(2)), ``log m = 2 atanh(s)``, ``s = (m - 1) / (m + 1)``, its odd
    series to ``s^17``. Zero, negatives, subnormals, inf and NaN take the C library's."""
    for j in range(bits.size):
        b = bits[j]
        k = (b - 0x3F3504F3) >> 23  # the exponent that puts the mantissa above sqrt(1/2)
        mb = b - (k << 23)
        above = np.float64(mb - 0x3F800000) * 1.1920928955078125e-07  # f = m - 1, exactly
        below = np.float64(mb - 0x3F000000) * 5.9604644775390625e-08 - 0.5
        f = above if mb >= 0x3F800000 else below
        s = f / (2.0 + f)
        z = s * s
        p = 0.11764705882352941
        p = p * z + 0.13333333333333333
        p = p * z + 0.15384615384615385
        p = p * z + 0.18181818181818182
        p = p * z + 0.2222222222222222
        p = p * z + 0.2857142857142857
        p = p * z + 0.4
        p = p * z + 0.6666666666666666
        p = p * z + 2.0
        kf = np.float64(k)
        out[j] = np.float32(kf * _LN2_HI + (s * p + kf * _LN2_LO))
    for j in range(bits.size):  # (int32 bounds and one float32 per branch: a fast scan)
        if bits[j] < _F32_NORMAL or bits[j] >= _F32_INF:
            v = np.float64(x[j])
            out[j] = np.float32(math.log(v)) if v >= 0.0 else np.float32(math.nan)


@njit(numpy_division=True)
def tanh(x, out):  # pragma: no cover - compiled
    """``tanh`` of float32 ``x``: ``e / (e + 2)`` with ``e = expm1(2|x|)`` (``2|x| = k ln 2 + r``,
    ``expm1 r`` by its series to ``r^10``), the sign put back; ``|x|`` above 9.5 gives 1."""
    for j in range(x.size):
        v = x[j]
        y = 2.0 * min(abs(np.float64(v)), 9.5)
        kf = np.rint(y * 1.4426950408889634)
        r = (y - kf * _LN2_HI) - kf * _LN2_LO
        p = 2.755731922398589e-07
        p = p * r + 2.7557319223985893e-06
        p = p * r + 2.48015873015873e-05
        p = p * r + 0.0001984126984126984
        p = p * r + 0.001388888888888889
        p = p * r + 0.008333333333333333
        p = p * r + 0.041666666666666664
        p = p * r + 0.16666666666666666
        p = p * r + 0.5
        p = (p * r) * r + r
        scale = np.float64(np.int64(1) << np.int64(kf))
        e = scale * p + (scale - 1.0)
        t = np.float32(math.copysign(e / (e + 2.0), v))
        out[j] = t if v == v else v


_PIO2_1, _PIO2_2, _PIO2_3 = 1.5707963267341256, 6.077100506303966e-11, 2.0222662487959506e-21
_TRIG_LIMIT = np.float32(524288.0)  # |x| below 2^19: k * _PIO2_1 and k * _PIO2_2 exact


@njit(numpy_division=True)
def _sin_cos(v):  # pragma: no cover - compiled
    """``(sin r, cos r, n)`` with ``v = n pi/2 + r``, ``|r| <= pi/4`` (pi/2 in three parts),
    the series to ``r^15`` and ``r^14``."""
    kf = np.rint(v * 0.6366197723675814)
    r = ((v - kf * _PIO2_1) - kf * _PIO2_2) - kf * _PIO2_3
    z = r * r
    p = -7.647163731819816e-13
    p = p * z + 1.6059043836821613e-10
    p = p * z + -2.505210838544172e-08
    p = p * z + 2.7557319223985893e-06
    p = p * z + -0.0001984126984126984
    p = p * z + 0.008333333333333333
    p = p * z + -0.16666666666666666
    q = -1.1470745597729725e-11
    q = q * z + 2.08767569878681e-09
    q = q * z + -2.755731922398589e-07
    q = q * z + 2.48015873015873e-05
    q = q * z + -0.001388888888888889
    q = q * z + 0.041666666666666664
    q = q * z + -0.5
    return r + (r * z) * p, 1.0 + z * q, kf - 4.0 * np.floor(kf * 0.25)  # (n mod 4, as a float)


@njit(numpy_division=True)
def _beyond(x):  # pragma: no cover - compiled
    """How many of ``x`` are inf, NaN or from 2^19 in magnitude (a counting scan vectorises;
    a scan that branches to the fix-up in its body does not)."""
    count = 0
    for j in range(x.size):
        count += not (abs(x[j]) < _TRIG_LIMIT)
    return count


@njit(numpy_division=True)
def sin(x, out):  # pragma: no cover - compiled
    """``sin`` of float32 ``x``: the quadrant's ``±sin r`` or ``±cos r``; ``|x|`` from 2^19,
    inf and NaN take the C library's (float64)."""
    for j in range(x.size):
        v = np.float64(min(max(x[j], -_TRIG_LIMIT), _TRIG_LIMIT))
        s, c, n = _sin_cos(v)
        t = c if n == 1.0 or n == 3.0 else s
        t = -t if n >= 2.0 else t
        out[j] = np.float32(t) if v != 0.0 else x[j]  # (-0.0 kept)
    if _beyond(x):
        for j in range(x.size):
            if not (abs(x[j]) < _TRIG_LIMIT):
                out[j] = np.float32(math.sin(np.float64(x[j])))


@njit(numpy_division=True)
def cos(x, out):  # pragma: no cover - compiled
    """``cos`` of float32 ``x``, as :func:`sin`."""
    for j in range(x.size):
        v = np.float64(min(max(x[j], -_TRIG_LIMIT), _TRIG_LIMIT))
        s, c, n = _sin_cos(v)
        t = s if n == 1.0 or n == 3.0 else c
        out[j] = np.float32(-t if n == 1.0 or n == 2.0 else t)
    if _beyond(x):
        for j in range(x.size):
            if not (abs(x[j]) < _TRIG_LIMIT):
                out[j] = np.float32(math.cos(np.float64(x[j])))
