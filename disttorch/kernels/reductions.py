"""Fused reductions: sums that BLAS does in one pass where NumPy's own loop is slow, and
sums split over the op's threads. Measured by ``benchmarks/kernels.py``.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .threads import parallel_for, parallel_over, parts_for

__all__ = ["add_reduce", "column_sum"]


def column_sum(a: np.ndarray) -> np.ndarray:
    """Sum over the rows of ``a`` ``(R, D)``: a vector-matrix product (BLAS, one read of
    ``a``), several times faster than ``a.sum(0)``, whose NumPy loop strides across rows."""
    return np.ones(a.shape[0], dtype=a.dtype) @ a


# ---------------------------------------------------------------------- sliding windows


def add_reduce(x: np.ndarray, axis: Optional[tuple], dtype: Any, keepdims: bool) -> np.ndarray:
    """``np.add.reduce(x, axis, dtype=dtype, keepdims=keepdims)`` (``axis`` a tuple or None),
    split over the op's threads when large. Summing some dims: ranges of a kept dim, each
    output element summed whole by one thread (NumPy may order a slice's additions
    otherwise than the whole array's). Summing every dim: each thread sums a range of the
    flat array and the partial sums are added in order. Either way deterministic for a
    thread count, within float tolerance across thread counts."""
    dims = tuple(range(x.ndim)) if axis is None else tuple(d % x.ndim for d in axis)
    if not x.ndim or x.dtype.kind not in "fiub" or parts_for(x.size, x.size) == 1:
        return np.add.reduce(x, axis=axis, dtype=dtype, keepdims=keepdims)
    if len(dims) == x.ndim:
        if not x.flags.c_contiguous:
            return np.add.reduce(x, axis=axis, dtype=dtype, keepdims=keepdims)
        flat, parts = x.reshape(-1), parts_for(x.size, x.size)
        partial = np.empty(parts, dtype=np.add.reduce(flat[:1], dtype=dtype).dtype)

        def chunks(first: int, last: int) -> None:
            for i in range(first, last):
                partial[i] = np.add.reduce(flat[x.size * i // parts : x.size * (i + 1) // parts], dtype=dtype)

        parallel_for(parts, chunks, work=x.size)
        total = np.add.reduce(partial, dtype=partial.dtype)
        return total.reshape((1,) * x.ndim) if keepdims else total
    out = np.empty(
        tuple(1 if d in dims else n for d, n in enumerate(x.shape)),
        dtype=np.add.reduce(x.reshape(-1)[:1], dtype=dtype).dtype,
    )

    def part(index: tuple) -> None:
        np.add.reduce(x[index], axis=dims, dtype=dtype, keepdims=True, out=out[index])

    parallel_over(x.shape, part, skip=dims, work=x.size)
    return out if keepdims else out.reshape(tuple(n for d, n in enumerate(x.shape) if d not in dims))
