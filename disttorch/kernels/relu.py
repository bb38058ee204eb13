"""ReLU's kernel: ``max(x, 0)`` against cached rows of zeros. Measured by ``benchmarks/kernels.py``."""

from __future__ import annotations

from typing import Optional

import numpy as np

from .threads import elementwise_kernel

__all__ = ["relu"]

#: Length of the zero rows ``relu`` takes maxima against (64 KiB of float32: in L2 cache).
_ZERO_ROW = 16384
_zero_rows: dict = {}


@elementwise_kernel(cost=1)  # memory-bound, as a ufunc's add
def relu(x: np.ndarray, out: Optional[np.ndarray] = None) -> np.ndarray:
    """``max(x, 0)``, into ``out`` when given (``x``'s shape and dtype). NumPy vectorises the
    maximum of two arrays but not of an array and a scalar (about 3x slower on float32), so
    a contiguous ``x`` is taken as rows of :data:`_ZERO_ROW` elements against one cached row
    of zeros. Same values (NaN stays NaN)."""
    n = x.size
    if n < _ZERO_ROW or not x.flags.c_contiguous or (out is not None and not out.flags.c_contiguous):
        return np.maximum(x, 0, dtype=x.dtype, out=out)
    zeros = _zero_rows.get(x.dtype)
    if zeros is None:
        zeros = _zero_rows[x.dtype] = np.zeros(_ZERO_ROW, dtype=x.dtype)
    if out is None:
        out = np.empty_like(x)
    src, dst, whole = x.reshape(-1), out.reshape(-1), n - n % _ZERO_ROW
    np.maximum(src[:whole].reshape(-1, _ZERO_ROW), zeros, out=dst[:whole].reshape(-1, _ZERO_ROW))
    np.maximum(src[whole:], zeros[: n - whole], out=dst[whole:])
    return out
