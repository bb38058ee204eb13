"""Sparse-times-dense kernels over index arrays (no SciPy): the row sums of a sparse product
as ``np.add.reduceat`` over rows sorted once, in cache-sized blocks, instead of ``np.add.at``,
the dot products a sampled product needs, one ``einsum``, and the entries a sparse
``index_select`` keeps. Measured in ``benchmarks/sparse.py``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sampled_dot", "select_entries", "spmm"]


_BLOCK_ELEMENTS = 1 << 16  # products per block: the block stays in cache while it is summed


def spmm(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, dense: np.ndarray, nrows: int) -> np.ndarray:
    """``out[r] = sum(values[k] * dense[cols[k]] for k with rows[k] == r)``, ``out`` of shape
    ``(nrows, dense.shape[1])`` in the promoted dtype. ``rows`` need not be sorted (they are
    sorted once if not). The products are formed and summed per row in blocks of whole rows
    of about ``_BLOCK_ELEMENTS`` products: ``reduceat`` over a cache-sized block is several
    times faster than over the whole product array, and than ``np.add.at``."""
    dt = np.result_type(values.dtype, dense.dtype)
    out = np.zeros((nrows, dense.shape[1]), dtype=dt)
    if rows.size == 0:
        return out
    if (rows[1:] < rows[:-1]).any():
        order = np.argsort(rows, kind="stable")
        rows, cols, values = rows[order], cols[order], values[order]
    values = values.astype(dt, copy=False)
    starts = np.flatnonzero(np.concatenate(([True], rows[1:] != rows[:-1])))
    per_block = max(1, _BLOCK_ELEMENTS // max(dense.shape[1], 1))
    bounds = np.unique(np.append(np.searchsorted(starts, np.arange(0, rows.size, per_block)), starts.size))
    ends = np.append(starts[1:], rows.size)
    for i0, i1 in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        s, e = starts[i0], ends[i1 - 1]
        prod = dense[cols[s:e]].astype(dt, copy=False)
        prod *= values[s:e, None]
        seg = starts[i0:i1]
        out[rows[seg]] = np.add.reduceat(prod, seg - s, axis=0)
    return out


def sampled_dot(rows: np.ndarray, cols: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``out[k] = a[rows[k]] . b[cols[k]]`` (rows of two matrices with equal widths), in
    cache-sized blocks of positions."""
    dt = np.result_type(a.dtype, b.dtype)
    out = np.empty(rows.size, dtype=dt)
    step = max(1, _BLOCK_ELEMENTS // max(a.shape[1], 1))
    for s in range(0, rows.size, step):
        e = s + step
        out[s:e] = np.einsum(
            "ij,ij->i", a[rows[s:e]].astype(dt, copy=False), b[cols[s:e]].astype(dt, copy=False)
        )
    return out


def select_entries(coord: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The entries whose ``coord`` is in ``index``, as PyTorch's sparse ``index_select``
    orders them: ``(position in index, entry)`` pairs by position, then by entry."""
    order = np.argsort(coord, kind="stable")
    ranked = coord[order]
    lo = np.searchsorted(ranked, index, "left")
    counts = np.searchsorted(ranked, index, "right") - lo
    before = np.cumsum(counts) - counts
    position = np.repeat(np.arange(index.size, dtype=np.int64), counts)
    entry = order[np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(lo - before, counts)]
    return position, entry
