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
from .vec_exp_loops import _fma
from .vec_expm1_loops import _fms

__all__ = ["log1p"]

_F = np.float32
#: the factor SLEEF takes ``getexp`` of ``1 + x`` after (so the reduced argument lies in
#: [0.75, 1.5)); :func:`log1p` reads that product's exponent from its bits
_LOG1P_SCALE = _F(1.0 / 0.75)
#: ``2^-(f - 127)`` for a float32 exponent field ``f``: SLEEF's ``ldexp(1, -getexp)``
_INV_POW2 = np.ldexp(np.float32(1.0), 127 - np.arange(256)).astype(np.float32)
_LN2_HI, _LN2_LO = _F(0.69314718246459960938), _F(-1.904654323148236017e-09)
_LOG1P_BOUND = _F(1.0e38)  # above: SLEEF's log instead (here float64's, rounded once)


@njit(contract=False)
def log1p(x, out):  # pragma: no cover - compiled
    """``out[j] = log1p(x[j])`` with SLEEF's ``log1pf``. Branch-free but for the rare huge ``x``."""
    scaled = np.empty(x.size, np.float32)  # getexp's argument; its exponent field read as int32
    for j in range(x.size):
        scaled[j] = _F(x[j] + _F(1.0)) * _LOG1P_SCALE
    scaled_bits = scaled.view(np.int32)
    inv_pow2 = _INV_POW2
    for j in range(x.size):
        d = x[j]
        field = (scaled_bits[j] >> 23) & 0xFF
        e = _F(field - 127)  # getexp; inf's field gives 128, as SLEEF's fix-up
        t = inv_pow2[field]
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
    for j in range(x.size):
        if x[j] > _LOG1P_BOUND:
            out[j] = _F(math.log(np.float64(x[j])))
