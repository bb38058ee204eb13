"""ReLU's kernel: ``max(x, 0)`` against cached rows of zeros. Measured by ``benchmarks/kernels.py``."""

from __future__ import annotations

import numpy as np

from .threads import elementwise, parallel_for

__all__ = ["relu"]

#: Length of the zero rows ``relu`` takes maxima against (64 KiB of float32: in L2 cache).
_ZERO_ROW = 16384
_zero_rows: dict = {}


#: Per dtype, whether ``np.maximum(zero, x)`` (rather than ``np.maximum(x, zero)``) keeps -0.0.
_zero_first_of: dict = {}


def _zero_first(dtype: np.dtype) -> bool:
    """Whether ``np.maximum(zero, x)`` (rather than ``np.maximum(x, zero)``) maps -0.0 to -0.0,
    as PyTorch's ``relu``: on equal operands NumPy's SIMD loops (float32, float64) return the
    second, its scalar loops (float16, ...) the first; probed once per dtype."""
    first = _zero_first_of.get(dtype)
    if first is None:
        neg_zero = np.full(64, -0.0, dtype=dtype)
        first = _zero_first_of[dtype] = bool(np.signbit(np.maximum(np.zeros(64, dtype), neg_zero)).all())
    return first


def relu(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``max(x, 0)``, into ``out`` when given (``out=x``: in place, for ``relu_``). NumPy
    vectorises the maximum of two arrays but not of an array and a scalar (about 3x slower
    on float32), so a contiguous ``x`` is taken as rows of
    :data:`_ZERO_ROW` elements against one cached row of zeros, the rows split over the
    op's threads when large (memory-bound: a multiply's cost). Same values (NaN stays NaN,
    -0.0 stays -0.0)."""
    n = x.size
    first = x.dtype.kind == "f" and _zero_first(x.dtype)
    if n < _ZERO_ROW or not x.flags.c_contiguous or (out is not None and not out.flags.c_contiguous):
        zero = x.dtype.type(0)
        if out is not None:
            np.maximum(*((zero, x) if first else (x, zero)), out=out)
            return out
        return elementwise(np.maximum, zero, x) if first else elementwise(np.maximum, x, zero)
    zeros = _zero_rows.get(x.dtype)
    if zeros is None:
        zeros = _zero_rows[x.dtype] = np.zeros(_ZERO_ROW, dtype=x.dtype)
    if out is None:
        out = np.empty_like(x)
    src, dst, whole = x.reshape(-1), out.reshape(-1), n - n % _ZERO_ROW
    rows, out_rows = src[:whole].reshape(-1, _ZERO_ROW), dst[:whole].reshape(-1, _ZERO_ROW)

    def part(a: np.ndarray, z: np.ndarray, out: np.ndarray) -> None:
        np.maximum(*((z, a) if first else (a, z)), out=out)

    parallel_for(len(rows), lambda i, j: part(rows[i:j], zeros, out_rows[i:j]), work=n)
    part(src[whole:], zeros[: n - whole], dst[whole:])
    return out
