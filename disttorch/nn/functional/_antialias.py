"""The taps of anti-aliased resizing (``interpolate(..., antialias=True)``): PIL's filters,
stretched by the scale when shrinking, as PyTorch's CPU kernel computes them.

Output position ``i`` of an axis resized from ``size`` to ``out`` positions reads the
input positions around its centre ``c = scale * (i + 0.5)``, those within the filter's
support::

    scale   = size / out (or 1 / scale_factor; (size-1)/(out-1) with align_corners)
    support = taps/2 * max(scale, 1)        taps: 2 bilinear, 4 bicubic, 6 lanczos
    j       = trunc(c - support + 0.5) ... trunc(c + support + 0.5) - 1   (within the axis)
    weight  = filter((j - c + 0.5) / max(scale, 1)), normalised to sum to 1

Shrinking widens the filter over all the input positions an output covers (a bilinear
filter becomes a tent as wide as two output pixels), so no input is skipped: the aliasing
of plain interpolation goes away. Enlarging keeps the plain filter; the edges differ from
``antialias=False``, whose taps are clamped to the axis, where here they are dropped and
the rest renormalised.

The weights are computed in the input's float type as PyTorch computes them, with the
fused multiply-adds its compiled filter uses (:mod:`disttorch.kernels.fma`), so they are
PyTorch's to the bit; each output adds its taps in order, the last one fused when it has
an even number of taps, as PyTorch's compiled float64 loop does: float64 results are
PyTorch's bits, float32 ones within a few units in the last place (its float32 kernel
groups the sum differently).

uint8 images are resized in fixed point, as PIL and PyTorch's kernel do
(:func:`resize_uint8`): bitwise PyTorch's.
"""

from __future__ import annotations

import math

import numpy as np

from ...kernels.fma import fma
from ...kernels.threads import parallel_over

__all__ = ["FILTER_TAPS", "antialias_gather", "antialias_taps", "resize_uint8"]

#: taps of each mode's filter when not stretched
FILTER_TAPS = {"bilinear": 2, "bicubic": 4, "lanczos": 6}

#: the bicubic filter's ``a`` (PIL's; plain ``bicubic`` uses -0.75)
_CUBIC_A = -0.5


def _triangle(x: np.ndarray) -> np.ndarray:
    x = np.abs(x)
    return np.where(x < 1, 1 - x, 0).astype(x.dtype)


def _cubic(x: np.ndarray) -> np.ndarray:
    """Keys' cubic convolution with ``a = -0.5``, each Horner step one fused multiply-add."""
    x = np.abs(x)
    a = x.dtype.type(_CUBIC_A)
    near = fma(fma(a + 2, x, -(a + 3)) * x, x, 1)
    far = fma(fma(fma(a, x, -5 * a), x, 8 * a), x, -4 * a)
    return np.where(x < 1, near, np.where(x < 2, far, 0)).astype(x.dtype)


def _lanczos3(x: np.ndarray) -> np.ndarray:
    """``sinc(x) * sinc(x / 3)`` on ``[-3, 3)``, in float64 as PIL's filter."""
    wide = x.astype(np.float64)
    return np.where((wide >= -3) & (wide < 3), np.sinc(wide) * np.sinc(wide / 3), 0.0).astype(x.dtype)


_FILTERS = {"bilinear": _triangle, "bicubic": _cubic, "lanczos": _lanczos3}


def antialias_taps(
    size: int, out: int, mode: str, scale: float | None, align_corners: bool, dtype: np.dtype
) -> list:
    """``[(indices, weights, fused), ...]``, one entry per tap, each of length ``out``, for
    :class:`~disttorch.nn.functional._axis_taps.AxisTaps`: output ``i`` is the sum of its
    taps in order, the tap ``t`` added with one fused multiply-add where ``fused[i]``.
    ``dtype``: float32 or float64, the type PyTorch computes the weights in."""
    first, count, weights = antialias_windows(size, out, mode, scale, align_corners, dtype)
    j = np.arange(weights.shape[1])
    indices = np.minimum(first[:, None] + j, size - 1)  # (past-the-window taps have weight 0)
    last_fused = (count % 2 == 0)[:, None] & (j == count[:, None] - 1)
    return [(indices[:, t], weights[:, t], last_fused[:, t]) for t in range(len(j))]


def antialias_windows(
    size: int, out: int, mode: str, scale: float | None, align_corners: bool, dtype: np.dtype
) -> tuple:
    """``(first, count, weights)``: each output's first input position, its number of taps,
    and the ``(out, width)`` weights of its taps (zero past ``count``)."""
    ft = np.dtype(dtype).type
    if align_corners:
        step = ft((size - 1) / (out - 1)) if out > 1 else ft(0)
    else:
        step = ft(1.0 / scale) if scale is not None and scale > 0 else ft(size / out)
    stretch = float(step) >= 1.0
    support = ft(FILTER_TAPS[mode] * 0.5 * float(step)) if stretch else ft(FILTER_TAPS[mode] * 0.5)
    width = math.ceil(float(support)) * 2 + 1  # the most taps any output gets
    inverse = ft(1.0 / float(step)) if stretch else ft(1.0)
    # the centre is computed in double and stored in the float type; the window's ends are
    # the float difference, plus 0.5 in double, truncated
    centre = (float(step) * (np.arange(out) + 0.5)).astype(dtype)
    first = np.maximum(((centre - support).astype(np.float64) + 0.5).astype(np.int64), 0)
    end = np.minimum(((centre + support).astype(np.float64) + 0.5).astype(np.int64), size)
    count = np.clip(end - first, 0, width)
    j = np.arange(width)
    offset = (((first[:, None] + j).astype(dtype) - centre[:, None]).astype(np.float64) + 0.5) * float(
        inverse
    )
    weights = np.where(j < count[:, None], _FILTERS[mode](offset.astype(dtype)), 0).astype(dtype)
    total = np.zeros(out, dtype)
    for t in range(width):  # summed in order, in the float type
        total += weights[:, t]
    nonzero = total != 0
    weights[nonzero] /= total[nonzero, None]
    return first, count, weights


def antialias_gather(
    size: int, out: int, mode: str, scale: float | None, align_corners: bool
) -> tuple[np.ndarray, np.ndarray]:
    """``(indices, weights)``, both ``(out, width)``, of anti-aliased resizing in float64 (the
    weights :func:`resize_uint8` rounds to fixed point)."""
    first, _, weights = antialias_windows(size, out, mode, scale, align_corners, np.float64)
    return np.minimum(first[:, None] + np.arange(weights.shape[1]), size - 1), weights


def resize_uint8(a: np.ndarray, axis: int, indices: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Resize axis ``axis`` of a uint8 array to ``len(indices)`` positions in fixed point,
    output ``i`` reading ``a`` at ``indices[i]`` with float64 ``weights[i]``: the weights
    scaled by ``2**bits`` and rounded to int16 (``bits`` as large as the largest weight
    allows), each output the integer sum of its taps, plus a half, shifted back and clamped
    to 0-255."""
    out = len(indices)
    bits = 0
    while bits < 22 and int(0.5 + weights.max() * (1 << (bits + 1))) < (1 << 15):
        bits += 1
    scaled = weights * (1 << bits)
    fixed = np.where(scaled < 0, scaled - 0.5, scaled + 0.5).astype(np.int32)  # rounded half away
    view = [1] * a.ndim
    view[axis] = -1
    shape = list(a.shape)
    shape[axis] = out
    result = np.empty(shape, np.uint8)

    def part(index: tuple) -> None:
        src = a[index].astype(np.int32)
        total = np.full(result[index].shape, 1 << (bits - 1), np.int32)
        for t in range(fixed.shape[1]):
            taken = np.take(src, indices[:, t], axis=axis)
            total += taken * fixed[:, t].reshape(view)
        np.clip(total >> bits, 0, 255, out=total)
        result[index] = total

    parallel_over(tuple(shape), part, skip=(axis,), work=4 * fixed.shape[1] * result.size)
    return result
