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

import numpy as np

from .jit import compiled, njit
from .threads import get_num_threads

__all__ = ["torch_sum", "whole_sum"]

GRAIN = 32768  # PyTorch's at::internal::GRAIN_SIZE
_VECTOR_BYTES = 32
_ROW = 4  # vector accumulators side by side
_LEVELS = 4


_CASCADED = (np.dtype(np.float32), np.dtype(np.float64))


def whole_sum(x: np.ndarray) -> np.generic | None:
    """The sum of every element of ``x`` in PyTorch's order with the op threads' count, or
    None where that order is not followed (not float32/float64, or not one dense block)."""
    if x.dtype in _CASCADED and (x.flags.c_contiguous or x.flags.f_contiguous):
        return torch_sum(x, get_num_threads())
    return None


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


def _piece(flat: np.ndarray) -> np.generic:
    """One thread's sum (compiled when numba is installed)."""
    loop = compiled(_compile)
    if loop is not None:
        lanes = _VECTOR_BYTES // flat.itemsize
        lanes = lanes if flat.size >= lanes else 1
        return loop(flat, lanes, _power(flat.size // lanes // _ROW))[0]
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


def _compile() -> object:
    """The compiled form of :func:`_numpy_piece`: ``piece(flat, lanes, power)`` (lanes 1 for
    an array shorter than a vector; ``power`` from :func:`_power`) gives a 1-element array
    holding the sum (each addition rounded in ``flat``'s dtype)."""
    jit = njit(contract=False)

    @jit
    def piece(x, lanes, power):  # pragma: no cover - compiled
        n = x.size
        whole = n // lanes
        rows = whole // 4
        width = 4 * lanes
        step = 1 << power
        mask = step - 1
        acc = np.zeros((4, width), x.dtype)
        a0, a1, a2, a3 = acc[0], acc[1], acc[2], acc[3]
        i = 0
        while i + step <= rows:
            for _ in range(step):
                row = x[i * width : (i + 1) * width]
                for k in range(width):
                    a0[k] += row[k]
                i += 1
            for j in range(1, 4):
                lower, upper = acc[j - 1], acc[j]
                for k in range(width):
                    upper[k] += lower[k]
                    lower[k] = 0
                if i & (mask << (j * power)):
                    break
        while i < rows:
            row = x[i * width : (i + 1) * width]
            for k in range(width):
                a0[k] += row[k]
            i += 1
        for k in range(width):
            a0[k] = ((a0[k] + a1[k]) + a2[k]) + a3[k]
        for v in range(rows * 4, whole):
            for k in range(lanes):
                a0[k] += x[v * lanes + k]
        for r in range(1, 4):
            for k in range(lanes):
                a0[k] += a0[r * lanes + k]
        total = np.zeros(1, x.dtype)
        for k in range(whole * lanes, n):
            total[0] += x[k]
        for k in range(lanes):
            total[0] += a0[k]
        return total

    return piece
