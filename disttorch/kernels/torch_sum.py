"""The sum of every element of a float32 or float64 array, rounding for rounding as PyTorch's
CPU ``sum`` (and so ``mean``, its sum divided by the count) adds them.

PyTorch's kernel reads the elements in memory order as vectors of 32 bytes (8 float32
lanes, 4 float64) and keeps four vector accumulators side by side, each fed every fourth
vector (a *row* is four vectors). The rows are summed in a cascade of four levels: level 0
takes ``step = 2**p`` rows (``p = max(4, ceil_log2(rows) // 4)``) in order, then is added
into level 1 and cleared; level 1 is carried into level 2 every ``step**2`` rows, level 2
into level 3 every ``step**3``. The levels are then added in order, the leftover vectors go
into the first accumulator, the four accumulators are added in order, and the vector's
lanes are added one by one after the elements past the last whole vector::

    elements:  | v0 v1 v2 v3 | v4 v5 v6 v7 | ... | tail
    rows:        row 0         row 1               (accumulator k takes v(4r + k))

An array shorter than one vector goes through the same cascade one element at a time.
From ``GRAIN`` (32768) elements on, with more than one thread, the array is cut into one
contiguous piece per thread (``ceil(n / pieces)`` elements each), each piece is summed as
above, and the per-thread results (zeros for unused threads) are summed the same way.
NumPy's pairwise sum rounds otherwise, visibly in a printed loss or mean.

A piece is summed by loops compiled with numba when it is installed (``kernels/jit.py``),
else by NumPy passes over blocks of rows: both give the same bits.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from .jit import compiled
from .tensor_iterator import dim_order
from .threads import get_num_threads, parallel_for

__all__ = ["dims_sum", "reduction_walk", "torch_sum", "walk_offsets", "whole_sum"]

GRAIN = 32768  # PyTorch's at::internal::GRAIN_SIZE
_VECTOR_BYTES = 32
_ROW = 4  # vector accumulators side by side
_LEVELS = 4


_CASCADED = (np.dtype(np.float32), np.dtype(np.float64))


def whole_sum(x: np.ndarray) -> np.generic | None:
    """The sum of every element of ``x`` in PyTorch's order with the op threads' count, or
    None where that order is not followed (not float32/float64; a strided tensor of
    ``GRAIN`` elements or more with several threads; without numba, any strided tensor).
    A dense tensor in any dim order is one run in memory; a strided one (a slice) goes
    through the loops of :func:`dims_sum`, as PyTorch's iterator hands them its dims."""
    if x.dtype not in _CASCADED:
        return None
    threads = get_num_threads()
    walk = reduction_walk(x, tuple(range(x.ndim)))
    if walk is None:  # one element, none, or a flipped view
        return torch_sum(x, threads) if x.flags.c_contiguous or x.flags.f_contiguous else None
    buf, sizes, strides = walk[:3]
    if len(sizes) == 1 and strides[0] == 1:
        return torch_sum(buf, threads)
    out = dims_sum(x, tuple(range(x.ndim)), threads) if threads == 1 or x.size < GRAIN else None
    return None if out is None else out.reshape(())[()]


def torch_sum(x: np.ndarray, threads: int) -> np.generic:
    """The sum of the elements of ``x`` (float32 or float64, in memory order: ``x`` must be
    one dense block, as ``ravel(order="K")`` reads it without a copy) as PyTorch adds them
    with ``threads`` threads."""
    flat = x.ravel(order="K")
    n = flat.size
    pieces = min(threads, -(-n // GRAIN))
    if n < GRAIN or pieces <= 1:
        return _piece(flat)
    size = -(-n // pieces)
    partial = np.zeros(threads, flat.dtype)
    for k, start in enumerate(range(0, n, size)):
        partial[k] = _piece(flat[start : start + size])
    return _piece(partial)


def dims_sum(x: np.ndarray, dims: tuple, threads: int) -> np.ndarray | None:
    """The sum of the float32/float64 ``x`` over ``dims`` (the reduced dims kept as size 1),
    each output element added as PyTorch's CPU kernel adds it with ``threads`` threads, or
    None without numba (then NumPy's order is the caller's) or where another path applies
    (a flipped view, an empty tensor, no dim of size above 1 reduced).

    PyTorch's ``TensorIterator`` puts the reduced dims innermost (by stride), the kept ones
    outside them in the result's (row-major) order, merges neighbours that are one run, and
    hands its 2-D loop the first two dims once per index of the others (the innermost
    fastest); the loop adds its sums into the result. The loop takes one of four branches:
    a contiguous reduced dim as vectors (:func:`torch_sum_loops.inner_row` per row), a
    contiguous kept dim as columns side by side, else element by element along the smaller
    stride or across it. With several threads from ``GRAIN`` elements on, the outermost kept
    dim of at least ``threads`` entries is cut into one range per thread (to 128 bytes where
    it is contiguous), which moves the column blocks of the scalar branch."""
    loops = compiled(_load_loops)
    walk = reduction_walk(x, dims) if loops is not None and x.dtype in _CASCADED else None
    if walk is None:
        return None
    buf, sizes, strides, ostrides, out_shape = walk
    out = np.zeros(out_shape, x.dtype)
    pad = [0] * (2 - len(sizes))  # a 1-D iterator: one row
    sizes, strides, ostrides = sizes + [1] * len(pad), strides + pad, ostrides + pad
    offsets, outs = walk_offsets(sizes[2:], strides[2:], ostrides[2:])
    lanes = _VECTOR_BYTES // x.itemsize
    flat = out.reshape(-1)
    cuts = [(0, sizes[1])]
    if threads > 1 and x.size >= GRAIN and flat.size > 1:
        cuts = _thread_cuts(sizes, strides, ostrides, threads, 128 // x.itemsize)
    for begin, end in cuts:
        if strides[0] == 1 and sizes[0] >= lanes:
            mode, unit = loops.INNER_VECTOR, 1
        elif strides[1] == 1 and end - begin >= lanes:
            mode, unit = loops.OUTER_VECTOR, 4 * lanes
        else:
            mode = loops.INNER_SCALAR if strides[0] < strides[1] else loops.OUTER_SCALAR
            unit = 1 if mode == loops.INNER_SCALAR else 4

        def run(
            first: int, last: int, by_outer: bool, begin: int = begin, end: int = end, mode: int = mode
        ) -> None:
            at, stop = (begin, end) if by_outer else (begin + first, begin + last)
            part = slice(first, last) if by_outer else slice(None)
            loops.dims_sum(
                buf, offsets[part] + at * strides[1], outs[part] + at * ostrides[1], mode,
                sizes[0], strides[0], stop - at, strides[1], ostrides[1], lanes, flat,
            )  # fmt: skip

        _share(run, offsets.size, end - begin, unit, all(ostrides[2:]), ostrides[1] != 0, x.size)
    return out


def _share(
    run: Callable, outer: int, cols: int, unit: int, outer_kept: bool, cols_kept: bool, work: int
) -> None:
    """``run(first, last, by_outer)`` over the op's threads, each output element summed whole
    by one (so the bits do not depend on how many): ranges of the outer iterations when
    those are all kept dims, else of the 2-D loop's kept columns cut at multiples of ``unit``
    (its blocks of columns side by side), else on this thread."""
    if outer > 1 and outer_kept:
        parallel_for(outer, lambda a, b: run(a, b, True), work)
    elif cols_kept:
        blocks = -(-cols // unit)
        parallel_for(blocks, lambda a, b: run(a * unit, min(b * unit, cols), False), work)
    else:
        run(0, cols, False)


def reduction_walk(x: np.ndarray, dims: tuple) -> tuple | None:
    """How PyTorch's reduction ``TensorIterator`` walks ``x`` to reduce ``dims``: ``(buf,
    sizes, strides, out_strides, out_shape)``, its dims innermost first (the reduced ones
    first, by stride, then the kept ones in the result's row-major order; neighbours that are
    one run merged), with ``x``'s strides in elements from its first element in the flat view
    ``buf`` and the result's (0 where reduced), and the result's shape (reduced dims kept as
    1). None for an empty or flipped ``x``, or no reduced dim of size above 1."""
    if not x.size or any(s < 0 or s % x.itemsize for s in x.strides):
        return None
    walk = _walk(x.shape, tuple(s // x.itemsize for s in x.strides), tuple(dims))
    if walk is None:
        return None
    sizes, istr, ostr, out_shape, span = walk
    if x.flags.c_contiguous or x.flags.f_contiguous:
        buf = x.ravel(order="K")  # (a view: its first element is x's first)
    else:
        buf = np.lib.stride_tricks.as_strided(x, (span,), (x.itemsize,), writeable=False)
    return buf, list(sizes), list(istr), list(ostr), out_shape


@functools.lru_cache(maxsize=256)
def _walk(shape: tuple, strides: tuple, dims: tuple) -> tuple | None:
    """:func:`reduction_walk`'s dims for a shape and strides (in elements), and the span of
    memory they cover: the same every training step, so kept."""
    out_shape = tuple(1 if d in dims else n for d, n in enumerate(shape))
    out_strides = np.empty(out_shape, np.int8).strides
    reduced = [d for d in dims if shape[d] != 1]
    if not reduced:
        return None
    by_stride = dim_order(tuple(shape[d] for d in reduced), tuple(strides[d] for d in reduced))
    order = [reduced[i] for i in reversed(by_stride)]
    order += [d for d in reversed(range(len(shape))) if d not in dims and shape[d] != 1]
    sizes, istr, ostr = [], [], []
    for d in order:
        n, s, o = shape[d], strides[d], out_strides[d] if d not in dims else 0
        if sizes and sizes[-1] * istr[-1] == s and sizes[-1] * ostr[-1] == o:
            sizes[-1] *= n
        else:
            sizes.append(n), istr.append(s), ostr.append(o)
    span = 1 + sum((n - 1) * s for n, s in zip(sizes, istr))
    return tuple(sizes), tuple(istr), tuple(ostr), out_shape, span


def walk_offsets(sizes: list, strides: list, out_strides: list) -> tuple:
    """The offsets in ``x`` and in the result of each index of these iterator dims (innermost
    first), in the iterator's order: the innermost dim fastest (read-only arrays, kept)."""
    return _offsets(tuple(sizes), tuple(strides), tuple(out_strides))


@functools.lru_cache(maxsize=256)
def _offsets(sizes: tuple, strides: tuple, out_strides: tuple) -> tuple:
    offsets, outs = np.zeros(1, np.int64), np.zeros(1, np.int64)
    for n, s, o in zip(sizes[::-1], strides[::-1], out_strides[::-1]):  # outermost first
        offsets = (offsets[:, None] + np.arange(n) * s).reshape(-1)
        outs = (outs[:, None] + np.arange(n) * o).reshape(-1)
    offsets.flags.writeable = outs.flags.writeable = False
    return offsets, outs


def _thread_cuts(sizes: list, strides: list, ostrides: list, threads: int, line: int) -> list:
    """The ranges of the iterator's dim 1 the threads sum apart when PyTorch splits the work
    over that dim (``parallel_dim_reduction``: ``ceil(n / threads)`` entries each, their ends
    rounded down to a cache ``line`` of entries where the dim is contiguous), else its whole
    range (a cut of another dim leaves every output element's order as it is)."""
    split = len(sizes) - 1
    for d in range(len(sizes) - 1, -1, -1):
        if not ostrides[d]:
            break
        if sizes[d] >= threads:
            split = d
            break
        if sizes[d] > sizes[split]:
            split = d
    n = sizes[1]
    if split != 1:
        return [(0, n)]
    chunk = -(-n // min(threads, n))
    cuts = [(b, min(b + chunk, n)) for b in range(0, n, chunk)]
    if strides[1] == 1:
        cuts = [(b - b % line, e if e == n else e - e % line) for b, e in cuts]
    return [(b, e) for b, e in cuts if b != e]


def _piece(flat: np.ndarray) -> np.generic:
    """One thread's sum (compiled when numba is installed)."""
    loops = compiled(_load_loops)
    if loops is not None:
        lanes = _VECTOR_BYTES // flat.itemsize
        acc = np.empty(_ROW * _ROW * lanes, flat.dtype)
        return flat.dtype.type(loops.inner_row(flat, 0, flat.size, lanes if flat.size >= lanes else 1, acc))
    with np.errstate(over="ignore", invalid="ignore"):
        return _numpy_piece(flat)


def _numpy_piece(flat: np.ndarray) -> np.generic:
    """One thread's sum: whole vectors through the cascade, the tail elements in order, then
    the vector's lanes in order (an array shorter than a vector: elements as 1-lane vectors)."""
    lanes = _VECTOR_BYTES // flat.itemsize
    if flat.size < lanes:
        lanes = 1
    whole = flat.size // lanes
    vectors = flat[: whole * lanes].reshape(whole, lanes)
    total = _in_order(flat[whole * lanes :], np.zeros((), flat.dtype))
    return _in_order(_vector_sum(vectors), total)


def _vector_sum(vectors: np.ndarray) -> np.ndarray:
    """The four accumulators' cascade over the rows, the leftover vectors into the first,
    then the four added in order: one vector."""
    m, lanes = vectors.shape
    rows = m // _ROW
    acc = _cascade(vectors[: rows * _ROW].reshape(rows, _ROW * lanes)).reshape(_ROW, lanes)
    first = _in_order(vectors[rows * _ROW :], acc[0])
    return _in_order(acc[1:], first)


def _cascade(rows: np.ndarray) -> np.ndarray:
    """Level 0 sums each ``step`` rows from zero and carries the block into level 1; level
    ``j`` carries every ``step`` of its sums into ``j + 1``; the top level keeps all. Each
    level keeps the sum of its unfinished block; the levels are added from 0 up."""
    step = 1 << _power(rows.shape[0])
    zero = np.zeros(rows.shape[1:], rows.dtype)
    level, kept = rows, []
    for _ in range(_LEVELS - 1):
        full = level.shape[0] // step
        kept.append(_in_order(level[full * step :], zero))
        blocks = level[: full * step].reshape(full, step, rows.shape[1])
        level = blocks[:, 0].copy()
        for j in range(1, step):
            level += blocks[:, j]
    kept.append(_in_order(level, zero))
    return _in_order(np.array(kept[1:]), kept[0])


def _power(rows: int) -> int:
    """log2 of the cascade's block: ``max(4, ceil_log2(rows) // 4)`` (PyTorch's ceil_log2
    gives 1 up to 2)."""
    return max(4, (1 if rows <= 2 else (rows - 1).bit_length()) // _LEVELS)


def _in_order(values: np.ndarray, start: np.ndarray) -> np.ndarray:
    """``start + values[0] + values[1] + ...``, one addition at a time (first axis)."""
    total = np.array(start, copy=True)
    for v in values:
        total = total + v
    return total


def _load_loops() -> object:
    from . import torch_sum_loops

    return torch_sum_loops
