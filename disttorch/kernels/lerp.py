"""Linear interpolation, rounded as PyTorch's CPU kernel rounds it.

PyTorch computes ``lerp(start, end, w)`` from the nearer end, which keeps ``w = 0`` and
``w = 1`` exact::

    |w| < 0.5:  start + w       * (end - start)
    otherwise:  end   + (w - 1) * (end - start)

each as one fused multiply-add (:func:`disttorch.kernels.fma.fma`), in float32 for
float32, float16 and bfloat16 tensors, in float64 for float64: the same bits as PyTorch but
for a double-rounding tie (about one in 2**29). Complex tensors take the same two formulas
unfused, and may differ from PyTorch's kernel in the last bit.
"""

from __future__ import annotations

import numpy as np

from .fma import fma
from .threads import elementwise

__all__ = ["lerp"]


def lerp(
    start: np.ndarray, end: np.ndarray, weight: np.ndarray | float, out: np.ndarray | None = None
) -> np.ndarray:
    """``start + weight * (end - start)`` (broadcast) in ``start``'s dtype, from the nearer
    end; split over the op's threads when large (the same bits for every thread count); into
    ``out`` if given (``start`` itself for an in-place update)."""
    dtype = start.dtype
    narrow = dtype.kind == "V" or (dtype.kind == "f" and dtype.itemsize <= 4)
    compute = np.dtype(np.float32) if narrow else dtype
    w = weight.astype(compute, copy=False) if isinstance(weight, np.ndarray) else compute.type(weight)
    if out is not None:
        if dtype == compute == end.dtype == out.dtype and dtype.kind == "f" and np.ndim(w) == 0:
            base, coeff, diff = _nearer_end(start, end, w)
            return fma(coeff, diff, base, out=out)
        out[...] = lerp(start, end, weight)
        return out
    out = elementwise(
        _unfused if dtype.kind == "c" else _fused,
        start.astype(compute, copy=False),
        end.astype(compute, copy=False),
        w,
    )
    return out.astype(dtype, copy=False)


def _nearer_end(a: np.ndarray, b: np.ndarray, w: np.ndarray | np.generic) -> tuple:
    """``(base, coeff, end - start)`` of the formula from the nearer end (for a number ``w``
    one end, without a pass over the elements)."""
    if np.ndim(w) == 0 and np.shape(a) == np.shape(b):
        return (a, w, b - a) if abs(w) < 0.5 else (b, w - w.dtype.type(1), b - a)
    small = np.abs(w) < 0.5
    return np.where(small, a, b), np.where(small, w, w - w.dtype.type(1)), b - a


def _unfused(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    base, coeff, diff = _nearer_end(a, b, w)
    return base + coeff * diff


def _fused(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The multiply-add rounded once."""
    base, coeff, diff = _nearer_end(a, b, w)
    return fma(coeff, diff, base)
