"""The values of ``linspace``, bit for bit as PyTorch's CPU kernel computes them.

PyTorch computes ``step = (end - start) / (steps - 1)`` in the output dtype (in double for
integer outputs), then fills the first half forward from ``start`` and the second half
backward from ``end`` (so both ends are exact): ``start + step * i`` and
``end - step * (steps - 1 - i)``, each a fused multiply-add rounded once
(:func:`disttorch.kernels.fma.fma`, in float64).
"""

from __future__ import annotations

import numpy as np

from ._dtype import checked_scalar
from .kernels.fma import fma

__all__ = ["integer_ends", "linspace_values"]


def integer_ends(start: float, end: float, dtype: np.dtype) -> tuple:
    """``start`` and ``end`` converted into integer ``dtype`` as PyTorch converts them first:
    truncated, a negative one wrapped into an unsigned type, one past the type's range its
    RuntimeError (``linspace(0, 300, 4, dtype=torch.int8)``)."""
    return tuple(float(checked_scalar(int(np.trunc(v)), dtype)) for v in (start, end))


def _linspace_half(start: float, end: float, steps: int, half: type) -> np.ndarray:
    """float16 and bfloat16: PyTorch's same formulas, every operation rounded to ``half``
    (its half types compute each op in float32 and round the result; no fused multiply-add)."""
    first, last = half(start), half(end)
    step = half(half(last - first) / half(steps - 1))
    i = np.arange(steps)
    forward = first + step * i.astype(half)
    backward = last - step * (steps - 1 - i).astype(half)
    return np.where(i < steps // 2, forward, backward).astype(half)


def linspace_values(start: float, end: float, steps: int, dtype: np.dtype) -> np.ndarray:
    """``steps`` values from ``start`` to ``end`` of ``dtype``, as PyTorch's CPU ``linspace``
    (complex outputs: NumPy's spacing)."""
    if steps == 0:
        return np.empty(0, dtype=dtype)
    if dtype.kind in "iu":
        start, end = integer_ends(start, end, dtype)
    if steps == 1:
        return np.array([start], dtype=np.float64).astype(dtype)
    if dtype.kind not in "fiuV":  # complex: NumPy's spacing
        return np.linspace(start, end, steps).astype(dtype)
    if dtype.itemsize == 2 and dtype.kind in "fV":
        return _linspace_half(start, end, steps, dtype.type)
    # the ends are first cast to the output dtype (an integer output truncates them)
    step_type = dtype.type if dtype.kind == "f" else np.float64
    first, last = (step_type(v if dtype.kind == "f" else np.trunc(v)) for v in (start, end))
    step = np.float64(step_type((last - first) / step_type(steps - 1)))
    i = np.arange(steps, dtype=np.float64)
    forward = fma(np.full(steps, step), i, np.full(steps, np.float64(first)))
    backward = fma(np.full(steps, -step), (steps - 1) - i, np.full(steps, np.float64(last)))
    return np.where(np.arange(steps) < steps // 2, forward, backward).astype(dtype)
