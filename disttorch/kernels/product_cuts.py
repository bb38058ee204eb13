"""Where one matrix product may be cut into parts that keep the whole product's bits.

A split op's threads compute a single product ``a @ b`` in parts: rows ``i:j`` of the result
as ``a[i:j] @ b``, or columns as ``a @ b[:, i:j]``. Whether a part has the bits of the same
rows or columns of the whole product depends on NumPy's BLAS and the CPU's kernels:

- NumPy hands a row-major product to BLAS as the column-major ``b.T @ a.T``, so our rows
  are the kernel's columns. OpenBLAS computes them in tiles of its kernel's width and the
  rows of a narrower tile at the end with another kernel, which may round otherwise: on an
  AMD EPYC (Zen 3, OpenBLAS's Haswell kernels) a row cut keeps the bits only at multiples
  of 12 rows (``2048 x 128 @ 128 x 384`` cut at row 1024: 1 element in 50 differs); with the
  SkylakeX and SapphireRapids kernels at any row.
- Our columns are the kernel's rows, which OpenBLAS blocks by the whole product's size: a
  column cut on Zen 3 changes the bits wherever it falls; with the Intel kernels it did not.

:func:`cut_rule` asks the running BLAS once per dtype, cutting one product of the size of
the op pool's parts at candidate places (some 15 ms), rather than keep a table of kernels
(``tests/runtime/test_intraop_threads.py`` checks the products of real layers at 1 to 4
threads); :func:`cut_bounds` places the cuts.
"""

from __future__ import annotations

import functools
from typing import List, NamedTuple, Optional, Tuple

import numpy as np

__all__ = ["CutRule", "cut_bounds", "cut_rule"]

#: row steps tried, smallest first: a kernel's tile width divides one of them
_GRAINS = (1, 2, 4, 6, 8, 12, 16, 24, 32, 48)
#: the probe's product, and the first and last row and column where it is cut: every part
#: has some 4.7M multiply-adds or more, as the op pool's parts (threads.MIN_CUT_MACS), above
#: the sizes OpenBLAS gives its small-matrix kernels (up to 1M), which round otherwise
_ROWS, _DEPTH, _COLUMNS = 576, 96, 512
_FIRST_ROW, _LAST_ROW, _FIRST_COLUMN, _LAST_COLUMN = 96, 480, 96, 416


class CutRule(NamedTuple):
    """How a single product of one dtype may be cut: rows at multiples of ``row_grain``
    (0: not by rows), and columns anywhere when ``columns``."""

    row_grain: int
    columns: bool


@functools.cache
def cut_rule(dtype: np.dtype) -> CutRule:
    """The cuts of a ``dtype`` product that kept the whole product's bits when tried once on
    this process's BLAS (which must then run on one thread, as the op pool holds it): for
    each grain, a few of its multiples, the first that is no multiple of a larger grain
    included; for the columns, cuts at odd and even places."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((_ROWS, _DEPTH)).astype(dtype)
    b = rng.standard_normal((_DEPTH, _COLUMNS)).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(a.shape).astype(dtype)
        b = b - 1j * rng.standard_normal(b.shape).astype(dtype)
    whole = a @ b

    def rows_keep(cut: int) -> bool:
        return np.array_equal(whole[:cut], a[:cut] @ b) and np.array_equal(whole[cut:], a[cut:] @ b)

    def columns_keep(cut: int) -> bool:
        return np.array_equal(whole[:, :cut], a @ b[:, :cut]) and np.array_equal(
            whole[:, cut:], a @ b[:, cut:]
        )

    def row_cuts(g: int) -> tuple:
        first = -(-_FIRST_ROW // g) * g  # (first + g: no multiple of the next grains)
        return first + g, first, (_FIRST_ROW + _LAST_ROW) // 2 // g * g, _LAST_ROW // g * g

    grain = next((g for g in _GRAINS if all(rows_keep(c) for c in row_cuts(g))), 0)
    columns = all(columns_keep(c) for c in (_FIRST_COLUMN + 1, _FIRST_COLUMN, 255, _LAST_COLUMN))
    return CutRule(grain, columns)


def cut_bounds(m: int, n: int, parts: int, rule: CutRule, min_size: int) -> Optional[Tuple[str, List[int]]]:
    """Where to cut an ``m x n`` result into at most ``parts`` parts of at least ``min_size``
    rows or columns: ``("rows" or "columns", bounds)``, part ``t`` from ``bounds[t]`` to
    ``bounds[t + 1]``; the rows when they are allowed and at least as many as the columns
    (or the columns are not), row bounds at multiples of the rule's grain. ``None`` when the
    product cannot be cut in two."""
    by_rows = rule.row_grain > 0 and (m >= n or not rule.columns)
    if not by_rows and not rule.columns:
        return None
    total, step = (m, max(rule.row_grain, 1)) if by_rows else (n, 1)
    parts = min(parts, total // max(min_size, step))
    if parts < 2:
        return None
    bounds = [0] + [(total * t // parts + step // 2) // step * step for t in range(1, parts)] + [total]
    return ("rows" if by_rows else "columns"), bounds
