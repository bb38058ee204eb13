"""The compiled form of :func:`disttorch.kernels.fma.fma` (numba, the ``fast`` extra): the
processor's fused multiply-add (:func:`.jit_intrinsics.fma`), rounded once with no exception
(no double-rounding tie), on float32 or float64:

- ``fma(a, b, c)``: a NumPy ufunc, with its broadcasting, strides and ``out=``;
- ``scaled_add(s, b, c, out)`` and ``scaled_add_into(s, b, out)`` (``c`` is ``out``):
  ``s * b + c`` for a number ``s`` and flat arrays, and ``multiply_add_into(a, b, out)``
  for flat arrays, in place. A ufunc's loop over a broadcast number does not vectorise, nor
  one whose output is an input: these do (three times faster).

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

from .jit import njit, vectorize
from .jit_intrinsics import fma as _fma

__all__ = ["fma", "multiply_add_into", "scaled_add", "scaled_add_into"]


@vectorize(
    ["float32(float32, float32, float32)", "float64(float64, float64, float64)"], cache=True, nopython=True
)
def fma(a, b, c):  # pragma: no cover - compiled
    return _fma(a, b, c)


@njit()
def scaled_add(s, b, c, out):  # pragma: no cover - compiled
    for i in range(out.size):
        out[i] = _fma(s, b[i], c[i])


@njit()
def scaled_add_into(s, b, out):  # pragma: no cover - compiled
    for i in range(out.size):
        out[i] = _fma(s, b[i], out[i])


@njit()
def multiply_add_into(a, b, out):  # pragma: no cover - compiled
    for i in range(out.size):
        out[i] = _fma(a[i], b[i], out[i])
