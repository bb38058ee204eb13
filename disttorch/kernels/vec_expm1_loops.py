"""Compiled loop of :mod:`disttorch.kernels.vec_exp` (numba, the ``fast`` extra): SLEEF's
1-ulp ``expm1f`` step by step, as PyTorch's vectorised CPU kernels call it (``elu``).

SLEEF computes it in double-float arithmetic (a value as an unevaluated sum ``hi + lo`` of two
float32s): ``exp(a)`` reduced by ln 2 split in two parts, a degree-4 polynomial and three
double-float steps, scaled by ``2^q``, then ``- 1`` and the sum rounded once. Every float32
operation rounds on its own (``njit(contract=False)``); a fused multiply-add is the
processor's, as in :mod:`.vec_exp_loops`.

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

import math

import numpy as np

from .jit import njit
from .jit_intrinsics import fma32 as _fma

__all__ = ["c_expm1", "expm1"]

_F = np.float32


@njit(contract=False)
def _fms(a, b, c):  # pragma: no cover - compiled
    """``a * b - c`` rounded once (the exact error of a float32 product ``c``)."""
    return _fma(a, b, -c)


@njit(contract=False)
def _add(xh, xl, y):  # pragma: no cover - compiled
    """``(xh + xl) + y`` as a double-float (either magnitude first)."""
    s = _F(xh + y)
    v = _F(s - xh)
    return s, _F(_F(_F(xh - _F(s - v)) + _F(y - v)) + xl)


@njit(contract=False)
def _add2(xh, xl, yh, yl):  # pragma: no cover - compiled
    """``(xh + xl) + (yh + yl)`` as a double-float (either magnitude first)."""
    s = _F(xh + yh)
    v = _F(s - xh)
    return s, _F(_F(_F(xh - _F(s - v)) + _F(yh - v)) + _F(xl + yl))


@njit(contract=False)
def _mul(xh, xl, y):  # pragma: no cover - compiled
    """``(xh + xl) * y`` as a double-float."""
    s = _F(xh * y)
    return s, _fma(xl, y, _fms(xh, y, s))


@njit(contract=False)
def _mul2(xh, xl, yh, yl):  # pragma: no cover - compiled
    """``(xh + xl) * (yh + yl)`` as a double-float."""
    s = _F(xh * yh)
    return s, _fma(xh, yl, _fma(xl, yh, _fms(xh, yh, s)))


#: ``2^q`` for the ``q`` of ``expm1``'s range (``q + 32`` indexes it): scaling by it is exact
#: there, as SLEEF's two-step scaling is
_POW2 = np.ldexp(1.0, np.arange(-32, 160))


@njit(contract=False)
def expm1(x, out):  # pragma: no cover - compiled
    """``out[j] = expm1(x[j])`` with SLEEF's ``expm1f`` (1 ulp): -1 below about -16.64, inf
    above about 88.72, -0.0 and NaN kept; branch-free (selects), so that it vectorises."""
    pow2 = _POW2
    for j in range(x.size):
        a = x[j]
        a = min(max(a if a == a else _F(0.0), _F(-17.0)), _F(89.0))  # (NaN: any index will do)
        q = np.int32(
            np.rint(_F(a * _F(1.442695040888963407359924681001892137426645954152985934135449406931)))
        )
        sh, sl = _add(a, _F(0.0), _F(_F(q) * _F(-0.693145751953125)))
        sh, sl = _add(sh, sl, _F(_F(q) * _F(-1.428606765330187045e-06)))
        u = _F(0.1980960224e-3)
        u = _fma(u, sh, _F(0.1394256484e-2))
        u = _fma(u, sh, _F(0.8333456703e-2))
        u = _fma(u, sh, _F(0.4166637361e-1))
        th, tl = _mul(sh, sl, u)
        th, tl = _add(th, tl, _F(0.166666659414234244790680580464))
        th, tl = _mul2(sh, sl, th, tl)
        th, tl = _add(th, tl, _F(0.5))
        ssh = _F(sh * sh)
        ssl = _fma(_F(sh + sh), sl, _fms(sh, sh, ssh))  # (sh + sl) squared
        th, tl = _mul2(ssh, ssl, th, tl)
        th, tl = _add2(sh, sl, th, tl)
        one_h = _F(_F(1.0) + th)
        one_l = _F(_F(_F(_F(1.0) - one_h) + th) + tl)
        scale = pow2[q + 32]
        dh, dl = _add(_F(one_h * scale), _F(one_l * scale), _F(-1.0))
        r = _F(dh + dl)
        r = _F(np.inf) if x[j] > _F(88.72283172607421875) else r
        r = _F(-1.0) if x[j] < _F(-16.635532333438687426013570) else r
        out[j] = x[j] if x[j] == _F(0.0) or x[j] != x[j] else r  # -0.0 and NaN as they are


@njit(contract=False)
def c_expm1(x, out):  # pragma: no cover - compiled
    """``out[j] = expm1(x[j])`` by the C library's ``expm1f`` (PyTorch's scalar loops')."""
    for j in range(x.size):
        out[j] = math.expm1(x[j])
