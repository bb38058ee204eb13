"""Compiled loops of :mod:`disttorch.kernels.vec_exp` (numba, the ``fast`` extra): SLEEF's
1-ulp ``expf(-x)`` step by step on the elements of whole 32-element blocks, the C library's
``expf`` (numba's float32 ``math.exp``) on the elements after them, and ``1 +`` that.
Every float32 operation rounds on its own (``njit(contract=False)``); a fused multiply-add is
the processor's (:func:`.jit_intrinsics.fma32`), as SLEEF's.

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

import math

import numpy as np

from .jit import njit
from .jit_intrinsics import bits_to_float32
from .jit_intrinsics import fma32 as _fma

__all__ = ["c_exp", "exp", "expf", "one_plus", "reduce"]

_F = np.float32


@njit(contract=False)
def _parts(d):  # pragma: no cover - compiled
    """SLEEF's ``expf(d)`` up to its last step, ``d`` in [-104, 100]: ``(u, k)``,
    ``exp(d) = u * 2^k``."""
    k = np.rint(d * _F(1.442695040888963407359924681001892137426645954152985934135449406931))
    s = _fma(k, _F(-0.693145751953125), d)
    s = _fma(k, _F(-1.428606765330187045e-06), s)
    p = _F(0.000198527617612853646278381)
    p = _fma(p, s, _F(0.00139304355252534151077271))
    p = _fma(p, s, _F(0.00833336077630519866943359))
    p = _fma(p, s, _F(0.0416664853692054748535156))
    p = _fma(p, s, _F(0.166666671633720397949219))
    p = _fma(p, s, _F(0.5))
    return _fma(s * s, p, s) + _F(1.0), np.int32(k)


@njit(contract=False)
def reduce(x, u, q):  # pragma: no cover - compiled
    """SLEEF's ``expf(-x)`` up to its last step: ``exp(-x) = u * 2^q``."""
    for j in range(u.size):
        u[j], q[j] = _parts(min(max(-x[j], _F(-104.0)), _F(100.0)))  # (beyond: ``one_plus``)


@njit(contract=False)
def expf(d):  # pragma: no cover - compiled
    """SLEEF's 1-ulp ``expf(d)``: ``u * 2^k`` scaled in two exact steps, 0 below -104, inf
    above 100, NaN kept."""
    u, k = _parts(min(max(d, _F(-104.0)), _F(100.0)))
    half = k >> 1
    u = u * bits_to_float32(np.int32((half + 127) << 23))
    u = u * bits_to_float32(np.int32((k - half + 127) << 23))
    u = _F(0.0) if d < _F(-104.0) else u
    u = _F(np.inf) if d > _F(100.0) else u
    return d if d != d else u


@njit(contract=False)
def exp(x, out):  # pragma: no cover - compiled
    """``out[j] = expf(x[j])`` (SLEEF's) on every element."""
    for j in range(x.size):
        out[j] = expf(x[j])


@njit(contract=False)
def one_plus(x, e, out):  # pragma: no cover - compiled
    """``1 + exp(-x)``, with ``e`` = ``exp(-x)`` from ``reduce`` for the first ``e.size``
    elements (SLEEF's limits applied here) and the C library's after them."""
    one = _F(1.0)
    for j in range(e.size):
        d = -x[j]
        v = _F(0.0) if d < _F(-104.0) else e[j]
        v = _F(np.inf) if d > _F(100.0) else v
        out[j] = one + (d if d != d else v)
    for j in range(e.size, x.size):
        out[j] = one + math.exp(-x[j])  # float32: the C library's expf, as PyTorch's scalar loop


@njit(contract=False)
def c_exp(x, out):  # pragma: no cover - compiled
    """``out[j] = exp(x[j])`` by the C library's ``expf`` (PyTorch's scalar loops')."""
    for j in range(x.size):
        out[j] = math.exp(x[j])
