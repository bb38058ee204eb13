"""Convolution by columns (im2col): the windows of the padded input copied into columns
``(N, groups, C/groups * K, P)``, one matrix product per image and group; the weight
gradient is the product with the columns transposed, the input gradient adds ``Wᵀ @ g``
back into the windows (col2im). Used where the shifted products (``conv_shifted.py``) do
not apply: strided convolutions and few input channels.

The op's threads take consecutive ranges of images (``threads.parallel_for``): outputs and
input gradients are bitwise the same for every thread count; the weight gradient adds each
thread's partial sum in image order (deterministic for a thread count).
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from .threads import matmul, parallel_for
from .windows import crop_index, pad_spatial, window_slices, windows

__all__ = ["col2im_input_grad", "conv", "weight_grad"]


def conv(x: np.ndarray, w: np.ndarray, geo: Any, bias: Optional[np.ndarray] = None) -> tuple:
    """``(output (N, O, *out), columns)`` of the convolution of ``x`` ``(N, C, *spatial)``
    by ``w``, plus ``bias`` ``(O,)`` when given (each thread adds it to its images);
    ``geo`` gives ``pads``, ``stride``, ``dilation``, ``groups``, ``kernel`` and ``out``."""
    n, groups = x.shape[0], geo.groups
    xp = pad_spatial(x, geo.pads)
    view = windows(xp, geo.kernel, geo.stride, geo.dilation, geo.out)
    positions = int(np.prod(geo.out))
    cols = np.empty((n, groups, x.shape[1] // groups * int(np.prod(geo.kernel)), positions), dtype=x.dtype)
    wm = w.reshape(groups, w.shape[0] // groups, -1)
    out = np.empty((n, groups, wm.shape[1], positions), dtype=np.result_type(x, w))

    def images(start: int, stop: int) -> None:
        cols[start:stop].reshape(view[start:stop].shape)[...] = view[start:stop]
        matmul(wm, cols[start:stop], out=out[start:stop])
        if bias is not None:
            out[start:stop] += bias.reshape(wm.shape[:2] + (1,))

    parallel_for(n, images, work=cols.size + out.size * wm.shape[-1])
    return out.reshape((n, w.shape[0]) + geo.out), cols


def weight_grad(g: np.ndarray, cols: np.ndarray, w_shape: tuple, groups: int) -> np.ndarray:
    """Gradient of the weight from the output gradient ``g`` ``(N, O, *out)`` and the
    columns :func:`conv` returned."""
    n = g.shape[0]
    gm = g.reshape(n, groups, w_shape[0] // groups, math.prod(g.shape[2:]))  # (n may be 0)
    parts: list = []

    def images(start: int, stop: int) -> None:
        parts.append((start, matmul(gm[start:stop], cols[start:stop].swapaxes(-1, -2)).sum(axis=0)))

    parallel_for(n, images, work=gm.size * cols.shape[2])
    return sum(p for _, p in sorted(parts, key=lambda item: item[0])).reshape(w_shape)


def col2im_input_grad(
    g: np.ndarray, w: np.ndarray, geo: Any, padded_shape: tuple, low: np.dtype | None = None
) -> np.ndarray:
    """Gradient of the input ``(N, C, *spatial)`` from the output gradient ``g``: the columns'
    gradient ``Wᵀ @ g`` added back into the windows they were read from, padding dropped.
    With ``low`` (float16) the columns are rounded to it and added in its arithmetic, one
    kernel offset after another, as PyTorch's float16 ``col2im`` adds them."""
    n, groups = g.shape[0], geo.groups
    wt = w.reshape(groups, w.shape[0] // groups, -1).swapaxes(-1, -2)
    gm = g.reshape(n, groups, w.shape[0] // groups, math.prod(g.shape[2:]))  # (n may be 0)
    gxp = np.zeros(padded_shape, dtype=low or np.result_type(g, w))

    def images(start: int, stop: int) -> None:
        gcols = matmul(wt, gm[start:stop])
        if low is not None:
            gcols = gcols.astype(low)
        gcols = gcols.reshape((stop - start, padded_shape[1]) + geo.kernel + geo.out)
        dst, lead = gxp[start:stop], (slice(None), slice(None))
        for k in np.ndindex(*geo.kernel):
            dst[window_slices(k, geo.stride, geo.dilation, geo.out)] += gcols[lead + k]

    parallel_for(n, images, work=gxp.size + gm.size * wt.shape[1])
    inner = tuple(s - lo - hi for s, (lo, hi) in zip(padded_shape[2:], geo.pads))
    return gxp[crop_index(inner, geo.pads)]
