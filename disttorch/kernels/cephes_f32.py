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


def _fma32(a: np.ndarray | float, b: np.ndarray | float, c: np.ndarray | float | None, tmp: np.ndarray,
           out: np.ndarray) -> np.ndarray:  # fmt: skip
    """``out = a * b + c`` for float32 values with one rounding: the product (exact) and the
    sum in the float64 buffer ``tmp``, then rounded into float32 ``out`` (three array passes,
    no allocation; ``out`` may be ``a`` or ``c``)."""
    np.multiply(a, b, out=tmp, dtype=np.float64)
    if c is not None:
        np.add(tmp, c, out=tmp)
    np.copyto(out, tmp, casting="same_kind")
    return out


def log_f32(x: np.ndarray) -> np.ndarray:
    """Natural log of positive normal float32 ``x`` (the uniforms ``1 - u`` of the Box-Muller
    transform): mantissa in [sqrt(1/2), sqrt(2)), a degree-9 polynomial in ``m - 1`` and the
    exponent times ln 2 split in two parts."""
    bits = np.asarray(x, dtype=_F).view(np.uint32)
    e = ((bits >> np.uint32(23)).astype(np.int32) - 126).astype(_F)
    m = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(_F)  # in [0.5, 1)
    small = m < _SQRTHF
    e -= small
    m = (m - _F(1)) + m * small  # m * small: m or 0, exact (np.where is far slower)
    m64, z = m.astype(np.float64), m * m
    tmp, y = np.empty(m.shape, np.float64), np.empty(m.shape, _F)
    _fma32(float(_LOG_P[0]), m64, float(_LOG_P[1]), tmp, y)
    for c in _LOG_P[2:]:
        _fma32(y, m64, float(c), tmp, y)
    _fma32(y, m64, None, tmp, y)
    _fma32(y, z, e * _LOG_Q1, tmp, y)
    _fma32(z, -0.5, y, tmp, y)
    return _fma32(e, float(_LOG_Q2), m + y, tmp, y)


def sincos_f32(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sin(x), cos(x))`` of non-negative float32 ``x`` (the Box-Muller angles ``2 pi u``):
    reduction by multiples of pi/4 in three parts, then Cephes' sine and cosine polynomials
    on ``[-pi/4, pi/4]``."""
    x = np.asarray(x, dtype=_F)
    j = (x * _FOPI).astype(np.int32)
    j += 1
    j &= ~1
    y = j.astype(_F)
    tmp, r = np.empty(x.shape, np.float64), x.copy()
    for dp in _DP:  # r + y * DP_k, fused
        _fma32(y, float(dp), r, tmp, r)
    z = r * r
    pc, ps = np.empty_like(r), np.empty_like(r)
    _fma32(float(_COS_P[0]), z, float(_COS_P[1]), tmp, pc)
    _fma32(pc, z, float(_COS_P[2]), tmp, pc)
    pc *= z
    _fma32(pc, z, z * _F(-0.5), tmp, pc)
    pc += _F(1)
    _fma32(float(_SIN_P[0]), z, float(_SIN_P[1]), tmp, ps)
    _fma32(ps, z, float(_SIN_P[2]), tmp, ps)
    ps *= z
    _fma32(ps, r, r, tmp, ps)
    # by j mod 8: sin takes the sine polynomial for 0 and 4 (cos the other), sin is negative
    # for 4 and 6, cos for 2 and 4; selected and signed by exact products (np.where is slow)
    sin_poly = (j & 2) == 0
    cos_poly = ~sin_poly
    s = ps * sin_poly + pc * cos_poly
    c = pc * sin_poly + ps * cos_poly
    s *= _F(1) - (j & 4).astype(_F) * _F(0.5)
    c *= _F(1) - ((j + 2) & 4).astype(_F) * _F(0.5)
    return s, c
