"""Compiled loops of :mod:`disttorch.kernels.torch_sum` (numba, the ``fast`` extra): PyTorch's
CPU cascade sum (``SumKernel.cpp``) step by step, every addition rounded in the array's dtype
(``njit(contract=False)``).

The elements are addressed in one flat buffer ``buf`` by offsets (element strides), so one
set of loops serves a contiguous row, a strided column and a block of vectors:

- :func:`multi_rows` is PyTorch's ``multi_row_sum``: ``rows`` rows of ``nk x nl`` columns
  (column ``(k, m)`` of row ``i`` at ``base + i*rstride + k*kstride + m``), each
  column summed in the four-level cascade (level 0 takes ``2**p`` rows,
  ``p = max(4, ceil_log2(rows) // 4)``).
- :func:`row_sum` is its ``row_sum``: ``n`` entries (each ``nl`` lanes wide) in four
  interleaved accumulators (entry ``i`` into ``i % 4``), the cascade over the groups of
  four, the leftover entries into the first, the four added in order.
- :func:`inner_row` is its ``vectorized_inner_sum`` of one contiguous row: ``row_sum`` over
  its whole vectors, then the elements after them added from zero, then the vector's lanes.
- :func:`vector_row` is :func:`inner_row` in one flat pass, for the rows of a sum over dims.
- :func:`dims_sum` is its 2-D loop (``cascade_sum``) over a ``TensorIterator``'s first two
  dims, once per index of the outer dims, adding each result into the output (``+=``).

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

import numpy as np

from .jit import njit

__all__ = ["INNER_SCALAR", "INNER_VECTOR", "OUTER_SCALAR", "OUTER_VECTOR", "dims_sum", "inner_row"]

# PyTorch's four 2-D loops (``cascade_sum``'s branches)
INNER_VECTOR, OUTER_VECTOR, INNER_SCALAR, OUTER_SCALAR = 0, 1, 2, 3


@njit(contract=False)
def _power(rows):  # pragma: no cover - compiled
    """log2 of the cascade's block: ``max(4, ceil_log2(rows) // 4)`` (ceil_log2 is 1 up to 2)."""
    ceil = 1
    if rows > 2:
        ceil = 0
        r = rows - 1
        while r:
            r >>= 1
            ceil += 1
    return max(4, ceil // 4)


@njit(contract=False)
def _add_rows(buf, at, count, rstride, nk, kstride, nl, acc):  # pragma: no cover - compiled
    """``acc[k * nl + m] += buf[at + i * rstride + k * kstride + m]`` for ``count`` rows ``i``
    in order: level 0 of the cascade (through slices, so that the indices are known not to be
    negative and a long loop vectorises)."""
    width = nk * nl
    if kstride == nl:  # each row's columns are one run
        for i in range(count):
            row = buf[at + i * rstride : at + i * rstride + width]
            for c in range(width):
                acc[c] += row[c]
        return
    for i in range(count):
        for k in range(nk):
            start = at + i * rstride + k * kstride
            seg = buf[start : start + nl]
            dst = acc[k * nl : (k + 1) * nl]
            for m in range(nl):
                dst[m] += seg[m]


@njit(contract=False)
def multi_rows(buf, base, rows, rstride, nk, kstride, nl, acc):  # pragma: no cover - compiled
    """PyTorch's ``multi_row_sum``: the column sums in ``acc[:nk * nl]`` (``acc``: scratch
    of ``4 * nk * nl`` entries, four levels side by side, overwritten). A level is set by its
    first carry and added at the end only if it was (adding its zeros would only turn a -0
    into +0, which every caller's sum from +0 does anyway)."""
    width = nk * nl
    power = _power(rows)
    step = 1 << power
    mask = step - 1
    a0 = acc[:width]
    for c in range(width):
        a0[c] = 0
    used = 1  # the levels that hold sums
    i = 0
    while i + step <= rows:
        _add_rows(buf, base + i * rstride, step, rstride, nk, kstride, nl, a0)
        i += step
        for j in range(1, 4):
            lower, upper = acc[(j - 1) * width : j * width], acc[j * width : (j + 1) * width]
            if j < used:
                for c in range(width):
                    upper[c] += lower[c]
                    lower[c] = 0
            else:
                for c in range(width):
                    upper[c] = lower[c]
                    lower[c] = 0
                used = j + 1
            if i & (mask << (j * power)):
                break
    _add_rows(buf, base + i * rstride, rows - i, rstride, nk, kstride, nl, a0)
    for j in range(1, used):
        level = acc[j * width : (j + 1) * width]
        for c in range(width):
            a0[c] += level[c]


@njit(contract=False)
def row_sum(buf, base, n, stride, nl, acc):  # pragma: no cover - compiled
    """PyTorch's ``row_sum`` of ``n`` entries ``stride`` apart, each ``nl`` contiguous lanes
    wide: the lanes' sums in ``acc[:nl]``."""
    groups = n // 4
    multi_rows(buf, base, groups, 4 * stride, 4, stride, nl, acc)
    a0 = acc[:nl]
    for i in range(groups * 4, n):
        seg = buf[base + i * stride : base + i * stride + nl]
        for m in range(nl):
            a0[m] += seg[m]
    for k in range(1, 4):
        part = acc[k * nl : (k + 1) * nl]
        for m in range(nl):
            a0[m] += part[m]


@njit(contract=False)
def inner_row(buf, base, n, lanes, acc):  # pragma: no cover - compiled
    """PyTorch's ``vectorized_inner_sum`` of the contiguous row ``buf[base:base + n]``
    (``lanes`` elements a vector; 1 for the scalar loop of a row shorter than a vector)."""
    whole = n // lanes
    row_sum(buf, base, whole, lanes, lanes, acc)
    total = buf.dtype.type(0)
    for k in range(whole * lanes, n):
        total += buf[base + k]
    for m in range(lanes):
        total += acc[m]
    return total


@njit(contract=False)
def vector_row(buf, base, n, lanes, acc):  # pragma: no cover - compiled
    """:func:`inner_row` in one flat pass, for the many rows of a sum over dims (the same
    additions; a call through the general loops costs some 100 ns a row, 8x the pass over a
    row of 128 float32 entries; a whole sum's one long row keeps :func:`inner_row`, whose
    blocks add faster): the row's vectors in groups of four, the groups through the cascade's levels (``acc``: four levels of ``4 * lanes``
    side by side), the leftover vectors into the first accumulator, the four added in order,
    then the tail elements from zero and the lanes."""
    width = 4 * lanes
    whole = n // lanes
    groups = whole // 4
    power = _power(groups)
    step = 1 << power
    mask = step - 1
    for c in range(width):
        acc[c] = 0
    used = 1
    g = 0
    while g + step <= groups:
        for r in range(g, g + step):
            row = buf[base + r * width : base + (r + 1) * width]
            for c in range(width):
                acc[c] += row[c]
        g += step
        for j in range(1, 4):
            lo, up = (j - 1) * width, j * width
            if j < used:
                for c in range(width):
                    acc[up + c] += acc[lo + c]
                    acc[lo + c] = 0
            else:
                for c in range(width):
                    acc[up + c] = acc[lo + c]
                    acc[lo + c] = 0
                used = j + 1
            if g & (mask << (j * power)):
                break
    for r in range(g, groups):
        row = buf[base + r * width : base + (r + 1) * width]
        for c in range(width):
            acc[c] += row[c]
    for j in range(1, used):
        for c in range(width):
            acc[c] += acc[j * width + c]
    for v in range(groups * 4, whole):
        for m in range(lanes):
            acc[m] += buf[base + v * lanes + m]
    for k in range(1, 4):
        for m in range(lanes):
            acc[m] += acc[k * lanes + m]
    total = buf.dtype.type(0)
    for e in range(whole * lanes, n):
        total += buf[base + e]
    for m in range(lanes):
        total += acc[m]
    return total


@njit(contract=False)
def dims_sum(
    buf, offsets, outs, mode, size0, stride0, size1, stride1, ostride1, lanes, out
):  # pragma: no cover
    """PyTorch's 2-D sum loop of branch ``mode`` over ``size0`` (reduced, ``stride0`` apart)
    by ``size1`` (``stride1`` apart; its results ``ostride1`` apart in ``out``, 0 when it is
    reduced too), run at each ``offsets[t]`` of ``buf`` into ``out[outs[t]:]``, in order."""
    acc = np.zeros(16 * lanes, buf.dtype)
    for t in range(offsets.size):
        base, o = offsets[t], outs[t]
        j = 0
        if mode == INNER_VECTOR:
            for j in range(size1):
                out[o + j * ostride1] += vector_row(buf, base + j * stride1, size0, lanes, acc)
        elif mode == INNER_SCALAR:
            for j in range(size1):
                row_sum(buf, base + j * stride1, size0, stride0, 1, acc)
                out[o + j * ostride1] += acc[0]
        else:
            group = 4 * lanes if mode == OUTER_VECTOR else 4
            while j + group <= size1:  # a block of columns side by side, each a plain cascade
                if mode == OUTER_VECTOR:
                    multi_rows(buf, base + j, size0, stride0, 4, lanes, lanes, acc)
                else:
                    multi_rows(buf, base + j * stride1, size0, stride0, 4, stride1, 1, acc)
                for c in range(group):
                    out[o + (j + c) * ostride1] += acc[c]
                j += group
            while mode == OUTER_VECTOR and j + lanes <= size1:  # a vector of columns
                row_sum(buf, base + j, size0, stride0, lanes, acc)
                for c in range(lanes):
                    out[o + (j + c) * ostride1] += acc[c]
                j += lanes
            while j < size1:
                row_sum(buf, base + j * stride1, size0, stride0, 1, acc)
                out[o + j * ostride1] += acc[0]
                j += 1
