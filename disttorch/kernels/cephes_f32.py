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


def log_f32(x: np.ndarray) -> np.ndarray:
    """Natural log of float32 ``x`` (NaN for ``x <= 0``): mantissa in [sqrt(1/2), sqrt(2)),
    a degree-9 polynomial in ``m - 1`` and the exponent times ln 2 split in two parts."""
    x = np.asarray(x, dtype=_F)
    invalid = x <= 0
    bits = np.maximum(x, _F(np.finfo(_F).tiny)).view(np.uint32)
    e = ((bits >> np.uint32(23)).astype(np.int32) - 127).astype(_F) + _F(1)
    m = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(_F)  # in [0.5, 1)
    small = m < _SQRTHF
    e = e - small.astype(_F)
    m = (m - _F(1)) + np.where(small, m, _F(0))
    z = m * m
    y = np.full_like(m, _LOG_P[0])
    for c in _LOG_P[1:]:
        y = fma_f32(y, m, c)
    y = fma_f32(y * m, z, e * _LOG_Q1)
    y = fma_f32(-z, _F(0.5), y)
    out = fma_f32(e, _LOG_Q2, m + y)
    out[invalid] = np.nan
    return out


def sincos_f32(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sin(x), cos(x))`` of float32 ``x``: reduction by multiples of pi/4 in three parts,
    then Cephes' sine and cosine polynomials on ``[-pi/4, pi/4]``."""
    x = np.asarray(x, dtype=_F)
    neg = np.signbit(x)
    ax = np.abs(x)
    j = (ax * _FOPI).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(_F)
    sin_flip = ((j & 4) != 0) ^ neg
    cos_flip = ((~(j - 2)) & 4) != 0
    use_sin_poly = (j & 2) == 0
    r = fma_f32(y, _DP[2], fma_f32(y, _DP[1], fma_f32(y, _DP[0], ax)))
    z = r * r
    pc = fma_f32(fma_f32(_COS_P[0], z, _COS_P[1]), z, _COS_P[2]) * z
    pc = fma_f32(pc, z, -(z * _F(0.5))) + _F(1)
    ps = fma_f32(fma_f32(_SIN_P[0], z, _SIN_P[1]), z, _SIN_P[2]) * z
    ps = fma_f32(ps, r, r)
    s = np.where(use_sin_poly, ps, pc)
    c = np.where(use_sin_poly, pc, ps)
    return np.where(sin_flip, -s, s), np.where(cos_flip, -c, c)
