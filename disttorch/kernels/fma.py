"""Fused multiply-add: ``a * b + c`` rounded once, as a CPU's FMA instruction rounds it.

PyTorch's compiled CPU kernels let the compiler fuse a multiply and the add that follows it
into one FMA, so some of its results are rounded once where NumPy's separate ``*`` and
``+`` round twice. Code that must give PyTorch's bits (``lerp.py``, ``linspace``, the
anti-aliased resampling of ``nn/functional/_antialias.py``, ``grid_sample``'s coordinates)
fuses the same steps with :func:`fma`:

- float32 (and narrower, computed in float32): the product of two float32 numbers is exact
  in float64, so the float64 sum rounded to float32 is the fused result, but for a
  double-rounding tie (about one in 2**29);
- float64: the product's rounding error comes from Dekker's split (each factor cut into two
  halves of 26 bits whose products are exact), the sum's from Knuth's two-sum, and the
  errors are added back before the last rounding: the fused result but for rare ties.

With numba (the ``fast`` extra) the loop is the processor's own FMA (:mod:`.fma_loops`):
exact, ties included, and one pass over memory.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .jit import compiled

__all__ = ["fma"]

#: Dekker's splitting constant for float64: 2**27 + 1 cuts a 53-bit significand in two
#: halves of at most 26 bits, whose pairwise products are exact.
_SPLIT = 134217729.0


_COMPILED = (np.dtype(np.float32), np.dtype(np.float64))


def _load_loops():
    from . import fma_loops

    return fma_loops


def fma(
    a: np.ndarray | float, b: np.ndarray | float, c: np.ndarray | float, out: np.ndarray | None = None
) -> np.ndarray:
    """``a * b + c`` (broadcast) rounded once, in the float dtype of the arrays (float32 or
    float64; a float16/bfloat16 caller computes in float32 first), into ``out`` if given."""
    dtype = np.result_type(a, b, c)
    loops = compiled(_load_loops)
    if loops is not None and dtype in _COMPILED:
        flat = _flat(dtype, b, c) and (out is None or out is c or _flat(dtype, out, c))
        if flat and np.ndim(a) == 0 and out is c:
            loops.scaled_add_into(dtype.type(a), b.reshape(-1), out.reshape(-1))
        elif flat and np.ndim(a) == 0:
            out = np.empty_like(c) if out is None else out
            loops.scaled_add(dtype.type(a), b.reshape(-1), c.reshape(-1), out.reshape(-1))
        elif flat and out is c and _flat(dtype, a, c):
            loops.multiply_add_into(a.reshape(-1), b.reshape(-1), out.reshape(-1))
        else:
            with np.errstate(over="ignore", invalid="ignore"):  # inf and NaN as the processor gives them
                return loops.fma(a, b, c, out=out, dtype=dtype)
        return out
    fused = _numpy_fma(a, b, c, dtype)
    if out is None:
        return fused
    out[...] = fused
    return out


def _flat(dtype: np.dtype, x: Any, c: Any) -> bool:
    """Whether ``x`` and ``c`` are C-contiguous arrays of ``dtype`` and one shape."""
    return (
        isinstance(x, np.ndarray)
        and isinstance(c, np.ndarray)
        and x.dtype == dtype == c.dtype
        and x.shape == c.shape
        and x.flags.c_contiguous
        and c.flags.c_contiguous
    )


def _numpy_fma(
    a: np.ndarray | float, b: np.ndarray | float, c: np.ndarray | float, dtype: np.dtype
) -> np.ndarray:
    if dtype.itemsize <= 4:
        out = np.multiply(a, b, dtype=np.float64)
        if out.shape == np.shape(c):
            out += c
        else:  # ``c`` broadcasts ``a * b`` (or is larger)
            out = np.add(out, c, dtype=np.float64)
        return out.astype(dtype)
    a, b, c = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
    with np.errstate(invalid="ignore", over="ignore"):
        product = a * b
        product_error = _product_error(a, b, product)
        total = product + c
        back = total - product  # Knuth's two-sum: total + sum_error == product + c exactly
        sum_error = (product - (total - back)) + (c - back)
        fused = total + (sum_error + product_error)
    # infinities and NaNs (and overflowing splits) take the plain result, as FMA gives them
    return np.where(np.isfinite(fused), fused, product + c)


def _product_error(a: np.ndarray, b: np.ndarray, product: np.ndarray) -> np.ndarray:
    """``a * b - product`` exactly (Dekker), for ``product`` the rounded ``a * b``."""
    a_high, a_low = _split(a)
    b_high, b_low = _split(b)
    return ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low


def _split(x: np.ndarray) -> tuple:
    """``(high, low)`` with ``high + low == x``, each with at most 26 significant bits."""
    scaled = _SPLIT * x
    high = scaled - (scaled - x)
    return high, x - high
