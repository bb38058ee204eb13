"""The compiled form of :func:`disttorch.kernels.fma.fma` (numba, the ``fast`` extra): a
NumPy ufunc ``fma(a, b, c)`` for float32 and float64 whose loop is the processor's fused
multiply-add (:mod:`.jit_intrinsics`), rounded once with no exception (no double-rounding
tie), with NumPy's broadcasting, strides and ``out=``.

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

import numba

from .jit_intrinsics import fma32, fma64

__all__ = ["fma"]


@numba.vectorize(["float32(float32, float32, float32)"], cache=True, nopython=True)
def _fma32(a, b, c):  # pragma: no cover - compiled
    return fma32(a, b, c)


@numba.vectorize(["float64(float64, float64, float64)"], cache=True, nopython=True)
def _fma64(a, b, c):  # pragma: no cover - compiled
    return fma64(a, b, c)


#: ``fma(a, b, c)``: the float32 ufunc for float32 operands, the float64 one otherwise.
fma = {4: _fma32, 8: _fma64}
