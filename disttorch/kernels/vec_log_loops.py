"""Compiled loops of :mod:`disttorch.kernels.vec_log` (numba, the ``fast`` extra): SLEEF's
1-ulp ``log1pf`` and ``powf`` step by step, as PyTorch's AVX-512 kernels call them.

Both work in double-float arithmetic (a value as an unevaluated sum ``hi + lo`` of two
float32s, the helpers of :mod:`.vec_expm1_loops`): ``log1p`` reduces ``1 + x`` by its binary
exponent (AVX-512's ``getexp``, read here from the bits of the float32 that SLEEF takes it
of) and sums ``2 atanh`` of the reduced argument's quotient; ``pow`` is ``exp(y log|x|)``
with both in double-float. Every float32 operation rounds on its own
(``njit(contract=False)``); a fused multiply-add is the processor's, as in
:mod:`.vec_exp_loops`.

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

import math

import numpy as np

from .jit import njit
from .jit_intrinsics import bits_to_float32, float32_bits
from .jit_intrinsics import fma32 as _fma
from .vec_expm1_loops import _add, _add2, _fms, _mul, _mul2

__all__ = ["c_log", "c_log1p", "c_pow", "log1p", "logf", "pow"]

_F = np.float32
#: the factor SLEEF takes ``getexp`` of ``1 + x`` (log1p) or ``|x|`` after (so the reduced
#: argument lies in [0.75, 1.5)); its exponent is read from its bits
_GETEXP_SCALE = _F(1.0 / 0.75)
_LN2_HI, _LN2_LO = _F(0.69314718246459960938), _F(-1.904654323148236017e-09)
_LOG1P_BOUND = _F(1.0e38)  # above: SLEEF's log instead (here float64's, rounded once)


@njit(contract=False)
def log1p(x, out):  # pragma: no cover - compiled
    """``out[j] = log1p(x[j])`` with SLEEF's ``log1pf``. Branch-free but for the rare huge ``x``."""
    for j in range(x.size):
        d = x[j]
        field = (float32_bits(_F(d + _F(1.0)) * _GETEXP_SCALE) >> 23) & 0xFF
        e = _F(field - 127)  # getexp; inf's field gives 128, as SLEEF's fix-up
        t = bits_to_float32(np.int32((254 - field) << 23))  # 2^-e (SLEEF's ldexp3 of 1)
        m = _fma(d, t, _F(t - _F(1.0)))
        sh, sl = _F(_LN2_HI * e), _fma(_LN2_LO, e, _fms(_LN2_HI, e, _F(_LN2_HI * e)))
        dh = _F(_F(2.0) + m)  # the divisor 2 + m as a double-float
        dl = _F(_F(_F(2.0) - dh) + m)
        r = _F(_F(1.0) / dh)  # m / (2 + m), SLEEF's double-float quotient
        qh = _F(m * r)
        u = _fms(r, m, qh)
        v = _fma(-dl, r, _fma(-dh, r, _F(1.0)))
        ql = _fma(qh, v, u)
        x2 = _F(qh * qh)
        p = _fma(_F(0.3027294874), x2, _F(0.3996108174))
        p = _fma(p, x2, _F(0.6666694880))
        yh, yl = _F(qh * _F(2.0)), _F(ql * _F(2.0))
        s = _F(sh + yh)
        sl = _F(_F(_F(_F(sh - s) + yh) + sl) + yl)
        y = _F(_F(x2 * qh) * p)
        s2 = _F(s + y)
        sl = _F(_F(_F(s - s2) + y) + sl)
        r = _F(s2 + sl)
        r = _F(np.nan) if d < _F(-1.0) else r
        r = _F(-np.inf) if d == _F(-1.0) else r
        out[j] = d if d == _F(0.0) or d != d else r  # -0.0, +0.0 and NaN as they are
    for j in range(x.size):  # (huge, inf: SLEEF's log there; here float64's, rounded once)
        if x[j] > _LOG1P_BOUND:
            out[j] = _F(math.log(np.float64(x[j])))


@njit(contract=False)
def c_log(x, out):  # pragma: no cover - compiled
    """``out[j] = log(x[j])`` by the C library's ``logf`` (PyTorch's scalar loops')."""
    for j in range(x.size):
        out[j] = math.log(x[j])


@njit(contract=False)
def c_log1p(x, out):  # pragma: no cover - compiled
    """``out[j] = log1p(x[j])`` by the C library's ``log1pf`` (PyTorch's scalar loops')."""
    for j in range(x.size):
        out[j] = math.log1p(x[j])


_R_LN2 = _F(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U, _L2L = _F(0.693145751953125), _F(1.428606765330187045e-06)


@njit(contract=False)
def _div(nh, nl, dh, dl):  # pragma: no cover - compiled
    """``(nh + nl) / (dh + dl)`` as a double-float (SLEEF's, with fused multiply-adds)."""
    t = _F(_F(1.0) / dh)
    s = _F(nh * t)
    u = _fms(t, nh, s)
    v = _fma(-dl, t, _fma(-dh, t, _F(1.0)))
    return s, _fma(s, v, _fma(nl, t, u))


@njit(contract=False)
def _sum(xh, xl, yh, yl):  # pragma: no cover - compiled
    """``(xh + xl) + (yh + yl)`` as a double-float, ``|x| >= |y|`` (SLEEF's ``dfadd``)."""
    s = _F(xh + yh)
    return s, _F(_F(_F(_F(xh - s) + yh) + xl) + yl)


@njit(contract=False)
def _ldexp(u, q):  # pragma: no cover - compiled
    """SLEEF's ``ldexp(u, q)`` for int32 ``q``: four steps of ``2^(16 k)`` (clamped), then one."""
    m = np.int32(q >> 31)
    m = np.int32(np.int32(np.int32(np.int32(m + q) >> 6) - m) << 4)
    q = np.int32(q - np.int32(m << 2))
    scale = bits_to_float32(np.int32(min(max(np.int32(m + 127), 0), 255) << 23))
    u = _F(_F(_F(_F(u * scale) * scale) * scale) * scale)
    return _F(u * bits_to_float32(np.int32(np.int32(q + 127) << 23)))


@njit(contract=False)
def _log_reduce(a):  # pragma: no cover - compiled
    """SLEEF's reduction of ``log|a|`` (``a`` normal): ``|a| = 2^e m``, ``m`` in [0.75, 1.5)
    (AVX-512's ``getexp`` of ``|a| * 4/3`` and ``getmant``, from the bits), and
    ``(m - 1) / (m + 1)`` as a double-float: ``(e, xh, xl)``."""
    e = _F(((float32_bits(abs(a) * _GETEXP_SCALE) >> 23) & 0xFF) - 127)
    frac = float32_bits(a) & 0x7FFFFF
    m = bits_to_float32(np.int32(frac | (0x3F000000 if frac >= 0x400000 else 0x3F800000)))
    nh = _F(_F(-1.0) + m)  # m - 1 and m + 1, each an exact double-float sum
    v = _F(nh - _F(-1.0))
    nl = _F(_F(_F(-1.0) - _F(nh - v)) + _F(m - v))
    dh = _F(_F(1.0) + m)
    v = _F(dh - _F(1.0))
    dl = _F(_F(_F(1.0) - _F(dh - v)) + _F(m - v))
    xh, xl = _div(nh, nl, dh, dl)
    return e, xh, xl


@njit(contract=False)
def logf(a):  # pragma: no cover - compiled
    """SLEEF's 1-ulp ``logf`` of a positive normal float32 ``a`` (a softmax row's sum), or
    NaN for NaN (a row holding NaN, or ``inf - inf``)."""
    if a != a:
        return a
    e, xh, xl = _log_reduce(a)
    x2 = _F(xh * xh)
    t = _fma(_F(0.3027294874), x2, _F(0.3996108174))
    t = _fma(t, x2, _F(0.6666694880))
    sh, sl = _mul(_LN2_HI, _LN2_LO, e)
    sh, sl = _sum(sh, sl, _F(xh * _F(2.0)), _F(xl * _F(2.0)))
    y = _F(_F(x2 * xh) * t)
    s = _F(sh + y)
    return _F(s + _F(_F(_F(sh - s) + y) + sl))


@njit(contract=False)
def pow(x, y, out):  # pragma: no cover - compiled
    """``out[j] = x[j] ** y[j]`` with SLEEF's ``powf``: ``exp(y log|x|)`` in double-float, the
    sign and C's special cases after; a subnormal ``x`` takes float64's power rounded once."""
    n = x.size
    for j in range(n):
        a, b = x[j], y[j]
        # logkf(|a|) as a double-float (lh, ll)
        e, xh, xl = _log_reduce(a)
        x2h = _F(xh * xh)
        x2l = _fma(_F(xh + xh), xl, _fms(xh, xh, x2h))
        t = _fma(_F(0.240320354700088500976562), x2h, _F(0.285112679004669189453125))
        t = _fma(t, x2h, _F(0.400007992982864379882812))
        sh, sl = _mul(_LN2_HI, _LN2_LO, e)
        sh, sl = _sum(sh, sl, _F(xh * _F(2.0)), _F(xl * _F(2.0)))
        ph, pl = _mul(x2h, x2l, t)
        ph, pl = _add2(ph, pl, _F(0.66666662693023681640625), _F(3.69183861259614332084311e-09))
        ch, cl = _mul2(x2h, x2l, xh, xl)
        ph, pl = _mul2(ch, cl, ph, pl)
        lh, ll = _sum(sh, sl, ph, pl)
        # expkf((lh, ll) * b)
        dh, dl = _mul(lh, ll, b)
        w = _F(_F(dh + dl) * _R_LN2)
        q = np.int32(np.rint(w)) if abs(w) < _F(2147483648.0) else np.int32(-2147483648)
        qf = _F(q)
        sh, sl = _add(dh, dl, _F(qf * -_L2U))
        sh, sl = _add(sh, sl, _F(qf * -_L2L))
        s = _F(sh + sl)
        sl = _F(_F(sh - s) + sl)
        sh = s
        u = _fma(_F(0.00136324646882712841033936), sh, _F(0.00836596917361021041870117))
        u = _fma(u, sh, _F(0.0416710823774337768554688))
        u = _fma(u, sh, _F(0.166665524244308471679688))
        u = _fma(u, sh, _F(0.499999850988388061523438))
        qh = _F(sh * sh)
        ql = _fma(_F(sh + sh), sl, _fms(sh, sh, qh))
        th, tl = _mul(qh, ql, u)
        th, tl = _sum(sh, sl, th, tl)
        s = _F(_F(1.0) + th)
        tl = _F(_F(_F(_F(1.0) - s) + th) + tl)
        r = _ldexp(_F(s + tl), q)
        r = _F(0.0) if dh < _F(-104.0) else r
        # powf's special cases, as selects (``&``, ``|``: no branches, so that the loop vectorises)
        r = _F(np.inf) if r != r else r
        big = abs(b) >= _F(16777216.0)
        b_int = (np.trunc(b) == b) | big
        b_odd = b_int & ~big & ((np.int32(_F(0.0) if big else np.trunc(b)) & 1) == 1)
        r = _F(r * (_F(1.0) if a > _F(0.0) else ((_F(-1.0) if b_odd else _F(1.0)) if b_int else _F(np.nan))))
        efx = abs(a) - _F(1.0)
        efx = -efx if b < _F(0.0) else efx
        r = (
            (_F(0.0) if efx < _F(0.0) else (_F(1.0) if efx == _F(0.0) else _F(np.inf)))
            if abs(b) == _F(np.inf)
            else r
        )
        small = (b < _F(0.0)) != (a == _F(0.0))
        edge = _F(math.copysign(_F(0.0) if small else _F(np.inf), a if b_odd else _F(1.0)))
        r = edge if (abs(a) == _F(np.inf)) | (a == _F(0.0)) else r
        r = _F(np.nan) if (a != a) | (b != b) else r
        out[j] = _F(1.0) if (b == _F(0.0)) | (a == _F(1.0)) else r
    _subnormal_bases(x, y, out)


@njit(contract=False)
def _subnormal_bases(x, y, out):  # pragma: no cover - compiled
    """``out[j] = x[j] ** y[j]`` in float64, rounded once, where ``x[j]`` is subnormal."""
    bits = x.view(np.int32)
    count = 0  # (a count first: a vectorised scan; the fix-up loop only runs where needed)
    for j in range(x.size):
        count += np.uint32(np.int32(bits[j] & np.int32(0x7FFFFFFF)) - np.int32(1)) < np.uint32(0x7FFFFF)
    if count:
        for j in range(x.size):
            if np.uint32(np.int32(bits[j] & np.int32(0x7FFFFFFF)) - np.int32(1)) < np.uint32(0x7FFFFF):
                out[j] = _F(math.pow(np.float64(x[j]), np.float64(y[j])))


@njit(contract=False)
def c_pow(x, y, out):  # pragma: no cover - compiled
    """``out[j] = x[j] ** y[j]`` by the C library's ``powf`` (PyTorch's scalar loops')."""
    for j in range(x.size):
        out[j] = math.pow(x[j], y[j])
