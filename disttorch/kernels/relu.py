"""ReLU's kernel: ``max(x, 0)`` against cached rows of zeros. Measured by ``benchmarks/kernels.py``."""

from __future__ import annotations

import numpy as np

from .threads import elementwise, parallel_for

__all__ = ["relu"]

#: Length of the zero rows ``relu`` takes maxima against (64 KiB of float32: in L2 cache).
_ZERO_ROW = 16384
_zero_rows: dict = {}


def relu(x: np.ndarray) -> np.ndarray:
    """``max(x, 0)``. NumPy vectorises the maximum of two arrays but not of an array and a
    scalar (about 3x slower on float32), so a contiguous ``x`` is taken as rows of
    :data:`_ZERO_ROW` elements against one cached row of zeros, the rows split over the
    op's threads when large (memory-bound: a multiply's cost). Same values (NaN stays NaN)."""
    n = x.size
    if n < _ZERO_ROW or not x.flags.c_contiguous:
        return elementwise(np.maximum, x, x.dtype.type(0))
    zeros = _zero_rows.get(x.dtype)
    if zeros is None:
        zeros = _zero_rows[x.dtype] = np.zeros(_ZERO_ROW, dtype=x.dtype)
    out = np.empty_like(x)
    src, dst, whole = x.reshape(-1), out.reshape(-1), n - n % _ZERO_ROW
    rows, out_rows = src[:whole].reshape(-1, _ZERO_ROW), dst[:whole].reshape(-1, _ZERO_ROW)
    parallel_for(len(rows), lambda i, j: np.maximum(rows[i:j], zeros, out=out_rows[i:j]), work=n)
    np.maximum(src[whole:], zeros[: n - whole], out=dst[whole:])
    return out
