"""Linear interpolation, rounded as PyTorch's CPU kernel rounds it.

PyTorch computes ``lerp(start, end, w)`` from the nearer end, which keeps ``w = 0`` and
``w = 1`` exact::

    |w| < 0.5:  start + w       * (end - start)
    otherwise:  end   + (w - 1) * (end - start)

each as one fused multiply-add, in float32 for float32, float16 and bfloat16 tensors. A
float32 product is exact in float64, so the fused step is the float64 multiply-add rounded
to float32: the same bits as PyTorch but for a double-rounding tie (about one in 2**29).
float64 and complex tensors take the same two formulas unfused, and may differ from
PyTorch's vector kernel in the last bit.
"""

from __future__ import annotations

import numpy as np

from .threads import elementwise

__all__ = ["lerp"]


def lerp(start: np.ndarray, end: np.ndarray, weight: np.ndarray | float) -> np.ndarray:
    """``start + weight * (end - start)`` (broadcast) in ``start``'s dtype, from the nearer
    end; split over the op's threads when large (the same bits for every thread count)."""
    dtype = start.dtype
    narrow = dtype.kind == "V" or (dtype.kind == "f" and dtype.itemsize <= 4)
    compute = np.dtype(np.float32) if narrow else dtype
    w = weight.astype(compute, copy=False) if isinstance(weight, np.ndarray) else compute.type(weight)
    out = elementwise(
        _fused if narrow else _unfused, start.astype(compute, copy=False), end.astype(compute, copy=False), w
    )
    return out.astype(dtype, copy=False)


def _nearer_end(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> tuple:
    """``(base, coeff, end - start)`` of the formula from the nearer end."""
    small = np.abs(w) < 0.5
    return np.where(small, a, b), np.where(small, w, w - w.dtype.type(1)), b - a


def _unfused(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    base, coeff, diff = _nearer_end(a, b, w)
    return base + coeff * diff


def _fused(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The float32 multiply-add rounded once (by way of float64, where the product is exact)."""
    base, coeff, diff = _nearer_end(a, b, w)
    out = np.multiply(coeff, diff, dtype=np.float64)
    out += base
    return out.astype(np.float32)
