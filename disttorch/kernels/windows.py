"""Sliding windows over NumPy arrays, the ground convolution and pooling are built on:
strided window views (no copy), the slice of outputs one kernel offset touches, constant
padding (``F.pad``'s, and the spatial padding of convolution and pooling) and the index that
crops it off again. Measured by ``benchmarks/kernels.py``.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .threads import parallel_over

__all__ = [
    "windows",
    "window_along",
    "window_range",
    "window_slices",
    "pad_constant",
    "pad_spatial",
    "crop_index",
]


def windows(xp: np.ndarray, kernel: tuple, stride: tuple, dilation: tuple, out: tuple) -> np.ndarray:
    """A read-only strided view of the windows of ``xp`` ``(N, C, *spatial)``:
    ``(N, C, *kernel, *out)``, no copy. Kernel axes step by ``dilation``, output axes by
    ``stride``."""
    s = xp.strides
    k_strides = tuple(a * b for a, b in zip(s[2:], dilation))
    o_strides = tuple(a * b for a, b in zip(s[2:], stride))
    return as_strided(xp, xp.shape[:2] + kernel + out, s[:2] + k_strides + o_strides, writeable=False)


def window_range(offset: int, stride: int, dilation: int, out: int) -> slice:
    """Along one spatial dim: the positions holding kernel element ``offset`` of each of
    the ``out`` windows."""
    start = offset * dilation
    return slice(start, start + stride * (out - 1) + 1, stride)


def window_along(axis: int, offset: int, stride: int, dilation: int, out: int) -> tuple:
    """Index selecting, along ``axis`` of an array, the element at kernel ``offset`` of
    every one of the ``out`` windows."""
    return (slice(None),) * axis + (window_range(offset, stride, dilation, out),)


def window_slices(offset: tuple, stride: tuple, dilation: tuple, out: tuple) -> tuple:
    """Index of ``xp`` ``(N, C, *spatial)`` selecting, for every output position, the input
    element at kernel ``offset``: shape ``(N, C, *out)``. Adding into these slices for every
    offset is the adjoint of the window view (col2im)."""
    return (slice(None), slice(None)) + tuple(
        window_range(k, st, dil, o) for k, st, dil, o in zip(offset, stride, dilation, out)
    )


def pad_constant(
    x: np.ndarray, pairs: list, value: float = 0.0, out: Optional[np.ndarray] = None
) -> np.ndarray:
    """``x`` grown by ``pairs`` ``[(before, after), ...]`` (one pair per dim; a negative
    amount crops), the new places filled with ``value``: a new array, or written into
    ``out`` (the padded shape). A large array is filled and copied by the op's threads, each
    taking a range of a dim that is not padded (the batch, the channels); every element is
    the same whatever the split."""
    shape = tuple(n + lo + hi for n, (lo, hi) in zip(x.shape, pairs))
    src = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(x.shape, pairs))
    dst = tuple(slice(max(lo, 0), m - max(hi, 0)) for m, (lo, hi) in zip(shape, pairs))
    out = np.empty(shape, dtype=x.dtype) if out is None else out

    def part(index: tuple) -> None:
        block = out[index]
        for d, inner in enumerate(dst):  # the borders of each dim, then the interior
            block[(slice(None),) * d + (slice(0, inner.start),)] = value
            block[(slice(None),) * d + (slice(inner.stop, None),)] = value
        block[dst] = x[index][src]

    padded = tuple(d for d, pair in enumerate(pairs) if pair != (0, 0))
    parallel_over(shape, part, skip=padded, work=2 * out.size)  # a fill and a copy
    return out


def pad_spatial(x: np.ndarray, pads: tuple, value: float = 0.0) -> np.ndarray:
    """``x`` ``(N, C, *spatial)`` padded with ``value`` by ``pads`` ``((lo, hi), ...)``
    (``x`` itself when there is no padding)."""
    if not any(lo or hi for lo, hi in pads):
        return x
    return pad_constant(x, [(0, 0), (0, 0), *pads], value)


def crop_index(inner: tuple, pads: tuple) -> tuple:
    """Index of the unpadded region (spatial size ``inner``) inside a padded array."""
    return (slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(inner, pads))
