"""Single-precision ``log`` and ``sincos`` by Cephes' ``logf``/``sinf``/``cosf`` polynomials,
step by step in float32 (each step one IEEE rounding, as 8-wide SIMD code computes them;
a multiply feeding only an add is one fused multiply-add, as the compiler contracts them).

PyTorch's CPU ``normal_`` turns float uniforms into normals with a vectorised Box-Muller
that uses exactly these approximations (Pommier's SIMD port of Cephes); evaluating the same
operations in the same order reproduces its float32 samples bit for bit, where NumPy's own
``log``/``cos``/``sin`` would differ in the last place.
"""

from __future__ import annotations

import numpy as np

__all__ = ["log_f32", "sincos_f32", "fma_f32"]

_F = np.float32
_LOG_P = [_F(c) for c in (
    7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
    -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1,
)]  # fmt: skip
_LOG_Q1, _LOG_Q2 = _F(-2.12194440e-4), _F(0.693359375)
_SQRTHF = _F(0.707106781186547524)
_DP = (_F(-0.78515625), _F(-2.4187564849853515625e-4), _F(-3.77489497744594108e-8))
_COS_P = (_F(2.443315711809948e-5), _F(-1.388731625493765e-3), _F(4.166664568298827e-2))
_SIN_P = (_F(-1.9515295891e-4), _F(8.3321608736e-3), _F(-1.6666654611e-1))
_FOPI = _F(1.27323954473516)  # 4 / pi


def fma_f32(a: np.ndarray, b: np.ndarray | np.float32, c: np.ndarray | np.float32) -> np.ndarray:
    """``a * b + c`` of float32 values with one rounding: the product is exact in float64, the
    sum rounds there and then to float32 (two roundings differ from one only when the float64
    sum falls exactly halfway between two float32 values: rare, unseen against PyTorch)."""
    return (np.asarray(a, np.float64) * np.float64(b) + np.asarray(c, np.float64)).astype(_F)


class _Fused:
    """Chains of float32 fused multiply-adds ``y = y * b + c`` on a float32 array ``y``: the
    product and sum in float64 (the product exact there), rounded once to float32; three
    array passes per step into preallocated buffers."""

    def __init__(self, y: np.ndarray) -> None:
        self.y = np.array(y, dtype=_F)  # a copy: steps write in place
        self._t = np.empty(self.y.shape, dtype=np.float64)

    def step(self, b: np.ndarray | float, c: np.ndarray | float = 0.0) -> "_Fused":
        np.multiply(self.y, b, out=self._t, dtype=np.float64)
        if not (np.isscalar(c) and c == 0):
            np.add(self._t, c, out=self._t)
        np.copyto(self.y, self._t, casting="same_kind")
        return self


def log_f32(x: np.ndarray) -> np.ndarray:
    """Natural log of positive normal float32 ``x`` (the uniforms ``1 - u`` of the Box-Muller
    transform): mantissa in [sqrt(1/2), sqrt(2)), a degree-9 polynomial in ``m - 1`` and the
    exponent times ln 2 split in two parts."""
    bits = np.asarray(x, dtype=_F).view(np.uint32)
    e = ((bits >> np.uint32(23)).astype(np.int32) - 126).astype(_F)
    m = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(_F)  # in [0.5, 1)
    small = m < _SQRTHF
    e -= small
    m = (m - _F(1)) + np.where(small, m, _F(0))
    m64, z = m.astype(np.float64), m * m
    y = _Fused(np.full(m.shape, _LOG_P[0]))
    for c in _LOG_P[1:]:
        y.step(m64, float(c))
    y.step(m64).step(z, e * _LOG_Q1).step(1.0, z * _F(-0.5))
    return _Fused(e).step(float(_LOG_Q2), m + y.y).y


# by octant pair k = (j >> 1) & 3: the sign of sin, the sign of cos, and whether sin takes
# the sine polynomial (else the cosine one, and cos the other)
_SIN_SIGN = np.array([1, 1, -1, -1], dtype=_F)
_COS_SIGN = np.array([1, -1, -1, 1], dtype=_F)
_SIN_POLY = np.array([True, False, True, False])


def sincos_f32(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sin(x), cos(x))`` of non-negative float32 ``x`` (the Box-Muller angles ``2 pi u``):
    reduction by multiples of pi/4 in three parts, then Cephes' sine and cosine polynomials
    on ``[-pi/4, pi/4]``."""
    x = np.asarray(x, dtype=_F)
    j = (x * _FOPI).astype(np.int32)
    j += 1
    j &= ~1
    y = j.astype(_F)
    k = (j >> 1) & 3
    r = x
    for dp in _DP:  # r + y * DP_k, fused
        r = _Fused(y).step(float(dp), r).y
    z = r * r
    pc = _Fused(np.full(r.shape, _COS_P[0])).step(z, float(_COS_P[1])).step(z, float(_COS_P[2])).y
    pc = _Fused(pc * z).step(z, z * _F(-0.5)).y + _F(1)
    ps = _Fused(np.full(r.shape, _SIN_P[0])).step(z, float(_SIN_P[1])).step(z, float(_SIN_P[2])).y
    ps = _Fused(ps * z).step(r, r).y
    use_sin_poly = _SIN_POLY[k]
    s = np.where(use_sin_poly, ps, pc) * _SIN_SIGN[k]
    c = np.where(use_sin_poly, pc, ps) * _COS_SIGN[k]
    return s, c
