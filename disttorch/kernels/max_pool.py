"""Max pooling's stages: the max over one spatial dim's kernel offsets, which offset won,
and the adjoint that routes a gradient back to the winners (``nn/functional/pooling.py``
runs one stage per spatial dim, the last dim first).

Each has a NumPy form (strided slices of the whole array, a pass per kernel offset) and,
with the ``fast`` extra, a compiled one (:mod:`disttorch.kernels.max_pool_loops`: one pass,
without the GIL) that gives the same bits. The compiled form takes float32 and float64
arrays in C order; anything else runs the NumPy form.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Optional

import numpy as np

from .jit import compiled
from .windows import window_along

__all__ = ["max_stage", "scatter_winners"]


def _load_loops() -> ModuleType:
    from . import max_pool_loops

    return max_pool_loops


def _rows(shape: tuple, axis: int) -> tuple:
    """``(outer, length, inner)``: an array of ``shape`` (C order) seen along ``axis``."""
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])


def _loops_for(*arrays: np.ndarray) -> Optional[ModuleType]:
    """The compiled loops when they take these arrays, else None."""
    if (
        not arrays[0].size
        or arrays[0].dtype not in (np.float32, np.float64)
        or not all(a.flags.c_contiguous for a in arrays)
    ):
        return None
    return compiled(_load_loops)


def max_stage(
    a: np.ndarray,
    axis: int,
    kernel: int,
    stride: int,
    dilation: int,
    out: int,
    best: Optional[np.ndarray] = None,
    winners: Optional[np.ndarray] = None,
) -> tuple:
    """``(best, winners)``: the maximum over each window along ``axis`` (window ``o`` holds
    the elements ``o * stride + k * dilation``, ``k < kernel``) and the first offset ``k``
    holding it, or the last holding a NaN (``uint8``), as PyTorch's kernel picks them;
    NumPy's ``maximum`` decides the value (NaN, signed zeros). Written into
    ``best`` and ``winners`` when given (C-ordered, of the result's shape)."""
    loops = _loops_for(a)
    if loops is not None:
        shape = a.shape[:axis] + (out,) + a.shape[axis + 1 :]
        best = np.empty(shape, a.dtype) if best is None else best
        winners = np.empty(shape, np.uint8) if winners is None else winners
        flat = (a.reshape(-1), *_rows(a.shape, axis), kernel, stride, dilation)
        loops.max_stage(*flat, best.reshape(-1), winners.reshape(-1))
        return best, winners
    # (new arrays from NumPy's own calls keep the input's layout: channels-last stays so)
    first = a[window_along(axis, 0, stride, dilation, out)]
    second = a[window_along(axis, 1 if kernel > 1 else 0, stride, dilation, out)]
    # as PyTorch's kernel: an element wins if it is greater (the first maximum wins ties) or NaN
    won = np.greater(second, first, out=None if winners is None else winners.view(np.bool_))
    if kernel > 1:
        won |= np.isnan(second)
    winners = won.view(np.uint8)
    best = np.maximum(first, second, out=best)
    for k in range(2, kernel):
        cand = a[window_along(axis, k, stride, dilation, out)]
        better = cand > best
        better |= np.isnan(cand)
        np.maximum(best, cand, out=best)
        np.copyto(winners, k, where=better)
    return best, winners


def scatter_winners(
    g: np.ndarray,
    winners: np.ndarray,
    in_shape: tuple,
    axis: int,
    kernel: int,
    stride: int,
    dilation: int,
    ga: Optional[np.ndarray] = None,
) -> np.ndarray:
    """The adjoint of :func:`max_stage`: an array of ``in_shape`` holding ``g`` at each
    window's winning offset and zero elsewhere (where windows overlap, the sum of what
    each sends there); written into ``ga`` when given (C-ordered, of ``in_shape``)."""
    out = g.shape[axis]
    disjoint = stride >= dilation * (kernel - 1) + 1  # windows along this dim do not overlap
    tiled = dilation == 1 and stride == kernel and out * kernel == in_shape[axis]  # every element written
    if ga is None:
        ga = (np.empty if tiled else np.zeros)(in_shape, dtype=g.dtype)
    elif not tiled:
        ga[...] = 0
    loops = _loops_for(g, winners)
    if loops is not None:
        flat = (g.reshape(-1), winners.reshape(-1), *_rows(in_shape, axis), kernel, stride, dilation)
        loops.scatter_winners(*flat, ga.reshape(-1))
        return ga
    parts = [ga[window_along(axis, k, stride, dilation, out)] for k in range(kernel)]
    if kernel == 2 and disjoint:  # winners are 0/1: offset 1 gets g * w, offset 0 the rest
        np.multiply(g, winners, out=parts[1])
        np.subtract(g, parts[1], out=parts[0])
    else:
        for k, part in enumerate(parts):
            if disjoint:
                np.multiply(g, winners == k, out=part)
            else:
                part += g * (winners == k)
    return ga
