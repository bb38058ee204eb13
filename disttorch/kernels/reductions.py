"""Fused reductions: sums that BLAS does in one pass where NumPy's own loop is slow, and
reductions (sums, products, max/min, any reduction of a slice) and scans (a running sum, a
sort along one dim) split over the op's threads. Measured by ``benchmarks/kernels.py``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from .jit import compiled
from .threads import parallel_for, parallel_over, parts_for, row_major

__all__ = ["add_reduce", "column_sum", "lane_norms", "reduce_along", "scan_along", "ufunc_reduce"]


def column_sum(a: np.ndarray) -> np.ndarray:
    """Sum over the rows of ``a`` ``(R, D)``: a vector-matrix product (BLAS, one read of
    ``a``), several times faster than ``a.sum(0)``, whose NumPy loop strides across rows."""
    return np.ones(a.shape[0], dtype=a.dtype) @ a


def lane_norms(rows: np.ndarray) -> np.ndarray:
    """The 2-norm of each row of the float32/float64 ``rows`` ``(R, D)``, rounding as PyTorch's
    vectorised norm kernel (its path for a reduction over contiguous last dims): the squares
    of the first ``D - D % L`` entries summed into ``L`` lanes (a 32-byte vector: 8 float32,
    4 float64), entry ``i`` into lane ``i % L`` in order; the lanes added in order; then the
    squares of the last ``D % L`` entries, one by one (float32's: the first 4 of them as
    rounded squares, the rest by fused multiply-adds, as PyTorch's AVX2 build); every step in
    the rows' dtype. Over
    millions of float32 entries this is several units in the fourth digit away from the
    exact norm, where a pairwise sum is not: the printed gradient norms differed. Compiled
    (one pass, no copy) when numba is there."""
    lanes = 32 // rows.dtype.itemsize
    loop = compiled(_load_lane_sums)
    if loop is not None and rows.flags.c_contiguous:
        total = np.empty(rows.shape[0], rows.dtype)
        loop(rows, lanes, rows.dtype == np.float32, total)
        return np.sqrt(total)
    body = rows.shape[1] - rows.shape[1] % lanes
    head = rows[:, :body]
    # a reduction over the middle axis adds each lane's entries strictly in order
    acc = np.add.reduce(np.multiply(head, head).reshape(rows.shape[0], body // lanes, lanes), axis=1)
    total = acc[:, 0].copy()
    for j in range(1, lanes):
        total += acc[:, j]
    plain, n = _tail_split(rows.dtype, body, rows.shape[1])
    for j in range(body, plain):
        total += rows[:, j] * rows[:, j]
    for j in range(plain, n):  # float32: a fused multiply-add, exact through float64
        col = rows[:, j].astype(np.float64)
        total = (col * col + total).astype(rows.dtype)
    return np.sqrt(total)


def _tail_split(dtype: np.dtype, body: int, n: int) -> tuple:
    """Where PyTorch's float32 tail (``body:n``) turns from plain additions of the rounded
    squares to fused multiply-adds (AVX2, measured): the first 4 tail entries plain when there
    are at least 4, the rest fused. float64's tail stays plain here (its fused steps need a
    wider type than NumPy has)."""
    if dtype != np.float32:
        return n, n
    return (body + 4 if n - body >= 4 else body), n


def _load_lane_sums() -> Callable:
    from .jit import njit

    @njit(contract=False)
    def lane_sums(rows, lanes, fused, out):  # pragma: no cover - compiled
        n = rows.shape[1]
        body = n - n % lanes
        acc = np.zeros(lanes, rows.dtype)
        for r in range(rows.shape[0]):
            acc[:] = 0
            for i in range(0, body, lanes):
                for j in range(lanes):
                    acc[j] += rows[r, i + j] * rows[r, i + j]
            total = acc[0]
            for j in range(1, lanes):
                total += acc[j]
            plain = n
            if fused:
                plain = body + 4 if n - body >= 4 else body
            for i in range(body, plain):
                total += rows[r, i] * rows[r, i]
            for i in range(plain, n):  # float32: a fused multiply-add, exact through float64
                x = np.float64(rows[r, i])
                acc[0] = x * x + np.float64(total)  # (stored: rounded to the rows' dtype)
                total = acc[0]
            out[r] = total

    return lane_sums


# ---------------------------------------------------------------------- split over threads


def ufunc_reduce(
    ufunc: np.ufunc, x: np.ndarray, axis: Optional[tuple], dtype: Any = None, keepdims: bool = False
) -> np.ndarray:
    """``ufunc.reduce(x, axis, dtype=dtype, keepdims=keepdims)`` (``axis`` a tuple or None;
    ``np.add``, ``np.multiply``, ``np.maximum``, ``np.minimum``), split over the op's threads
    when large. Reducing some dims: ranges of a kept dim, each output element reduced whole
    by one thread (NumPy may order a slice's additions otherwise than the whole array's).
    Reducing every dim: each thread reduces a range of the flat array and the partial
    results are combined in order. Sums and products are deterministic for a thread count,
    within float tolerance across thread counts; a max or min is the same value for every
    thread count. The result is row-major whatever ``x``'s strides (PyTorch's reductions
    allocate it so; NumPy's follows ``x``'s dim order)."""
    dims = tuple(range(x.ndim)) if axis is None else tuple(d % x.ndim for d in axis)
    if not x.ndim or x.dtype.kind not in "fiub" or parts_for(x.size, x.size) == 1:
        return row_major(ufunc.reduce(x, axis=axis, dtype=dtype, keepdims=keepdims))
    if len(dims) == x.ndim:
        if not x.flags.c_contiguous:
            return ufunc.reduce(x, axis=axis, dtype=dtype, keepdims=keepdims)
        flat, parts = x.reshape(-1), parts_for(x.size, x.size)
        partial = np.empty(parts, dtype=ufunc.reduce(flat[:1], dtype=dtype).dtype)

        def chunks(first: int, last: int) -> None:
            for i in range(first, last):
                partial[i] = ufunc.reduce(flat[x.size * i // parts : x.size * (i + 1) // parts], dtype=dtype)

        parallel_for(parts, chunks, work=x.size)
        total = ufunc.reduce(partial, dtype=partial.dtype)
        return total.reshape((1,) * x.ndim) if keepdims else total
    out = reduce_along(
        lambda block: ufunc.reduce(block, axis=dims, dtype=dtype, keepdims=True),
        x,
        dims,
        ufunc.reduce(x.reshape(-1)[:1], dtype=dtype).dtype,
    )
    return out if keepdims else out.reshape(tuple(n for d, n in enumerate(x.shape) if d not in dims))


def add_reduce(x: np.ndarray, axis: Optional[tuple], dtype: Any, keepdims: bool) -> np.ndarray:
    """``np.add.reduce`` split over the op's threads: :func:`ufunc_reduce`."""
    return ufunc_reduce(np.add, x, axis, dtype, keepdims)


def reduce_along(
    fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray, dims: tuple, dtype: Any, work: int = 0
) -> np.ndarray:
    """``fn(x)`` for a function reducing ``dims`` of ``x`` with the dims kept (``np.argmax``
    over one dim, a variance, ...), split over ranges of a kept dim when large: each output
    element is computed whole by one thread, from its own slice of ``x``. The result has
    ``dtype`` and the kept-dims shape, row-major whatever ``x``'s strides (as PyTorch's)."""
    return _per_slice(fn, x, dims, tuple(1 if d in dims else n for d, n in enumerate(x.shape)), dtype, work)


def scan_along(fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray, dim: int, work: int = 0) -> np.ndarray:
    """``fn(x)`` for a function whose result has ``x``'s shape and whose every slice along
    ``dim`` depends only on the same slice of ``x`` (a running sum, a sort order), split over
    ranges of another dim when large, laid out row-major. Each slice is computed whole by one thread with the
    same NumPy call, so the bits are the same for every thread count."""
    if x.ndim < 2 or parts_for(x.size, work or x.size) == 1:
        # row-major whatever ``x``'s layout (NumPy's scans keep it), as PyTorch's scans and
        # as the split path below
        return row_major(fn(x))
    dtype = fn(x[tuple(slice(0, 1) for _ in x.shape)]).dtype  # the result's dtype, from one element
    return _per_slice(fn, x, (dim,), x.shape, dtype, work)


def _per_slice(
    fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray, dims: tuple, shape: tuple, dtype: Any, work: int
) -> np.ndarray:
    """``fn(x)`` into a new array of ``shape`` and ``dtype``, split over ranges of a dim not in
    ``dims`` (the dims ``fn`` works along) when large: each thread computes ``fn`` of its
    own slice of ``x`` into the same slice of the result."""
    if len(dims) == x.ndim or parts_for(x.size, work or x.size) == 1:
        return row_major(fn(x))
    out = np.empty(shape, dtype=dtype)

    def part(index: tuple) -> None:
        out[index] = fn(x[index])

    parallel_over(x.shape, part, skip=dims, work=work or x.size)
    return out
