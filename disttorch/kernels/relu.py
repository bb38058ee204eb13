"""ReLU's kernels: ``max(x, 0)`` against cached rows of zeros, and its gradient as PyTorch's
``threshold_backward``. Measured by ``benchmarks/kernels.py``."""

from __future__ import annotations

import numpy as np

from .jit import compiled
from .threads import elementwise, parallel_for

__all__ = ["relu", "relu_grad"]

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


def relu_grad(g: np.ndarray, out: np.ndarray) -> np.ndarray:
    """ReLU's gradient as PyTorch's ``threshold_backward(g, out, 0)``: ``g`` where ``out`` is not
    ``<= 0`` (a NaN output passes it), exactly +0.0 where it is, whatever ``g`` holds there (a
    NaN or negative gradient of a unit that is off gives +0.0; ``g * (out > 0)`` gave NaN or
    -0.0). Branch-free and as fast as that product: ``g``'s bits ANDed with words of all ones
    (on) or zeros (off); split over the op's threads when large."""
    word = np.dtype(f"u{g.dtype.itemsize}")
    bits = g.view(word)
    res = np.empty(out.shape, dtype=word)
    if bits.shape == out.shape and bits.flags.c_contiguous and out.flags.c_contiguous:
        flat_g, flat_out, flat_res = bits.reshape(-1), out.reshape(-1), res.reshape(-1)
        parallel_for(
            res.size,
            lambda i, j: _keep_where_on(flat_g[i:j], flat_out[i:j], flat_res[i:j]),
            work=2 * res.size,
        )
    else:
        _keep_where_on(bits, out, res)
    return res.view(g.dtype)


def _keep_where_on(g_bits: np.ndarray, out: np.ndarray, res: np.ndarray) -> None:
    """``res = g_bits & (all ones where out > 0 or NaN, else 0)``, in unsigned words: with the
    ``fast`` extra one compiled pass over flat float32/float64 operands (three NumPy passes
    otherwise; the same bits)."""
    flat = out.ndim == 1 and g_bits.shape == out.shape
    loop = compiled(_load) if flat and out.dtype in (np.float32, np.float64) else None
    if loop is not None:
        loop(g_bits, out, res)
        return
    np.less_equal(out, 0, out=res)  # 1 where the unit is off
    res -= 1  # off: 0; on: all ones (wrapped)
    np.bitwise_and(g_bits, res, out=res)


def _load():
    from .jit import njit

    @njit()
    def keep_where_on(g_bits, out, res):  # pragma: no cover - compiled
        for i in range(res.size):
            bits = g_bits[i]
            res[i] = bits ^ bits if out[i] <= 0 else bits  # (a literal 0 and a uint64 make a float64)

    return keep_where_on
