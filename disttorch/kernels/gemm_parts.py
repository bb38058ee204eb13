"""Matrix products as rows of integers that compiled code runs without the GIL
(:mod:`disttorch.kernels.cblas_gemm`): the parts of a split product, or whole products,
for the op pool's threads. A row of :data:`FIELDS` int64s::

    KIND  ADDRESS  TRANS_A TRANS_B  M N K  A LDA  B LDB  C LDC  BATCH STEP_A STEP_B STEP_C  BIAS

means ``C[i] = A[i] @ B[i]`` for ``i < BATCH``: ``M x N`` row-major results, ``A``, ``B``,
``C`` and the ``STEP``s byte addresses and byte strides, leading dimensions (``LD*``) in
elements, ``TRANS_*`` CBLAS's transpose flags, ``KIND`` the element type and ``ADDRESS``
the CBLAS ``gemm`` for it. ``BIAS``, when not 0, is the address of ``N`` contiguous elements
then added to each row of each ``C[i]`` (a linear layer's bias: each thread adds it to its
own part of the product, with the bits of ``out += bias`` after the whole product).

A product qualifies when NumPy itself would hand its operands to BLAS unchanged: float32 or
float64 in native byte order, each matrix with unit stride along its rows or its columns
(a transposed view is fine; a view with steps is not), the result with unit stride along
its rows and not overlapping an operand, and stacks whose batch dims flatten into one
stride (broadcast operands included). Products that NumPy runs otherwise than with
``gemm`` (a matrix-vector product; ``x @ x.T`` as ``syrk``: refused whenever both
operands start at one address) and anything else stay with ``np.matmul``, so that a whole
product has NumPy's numbers.
"""

from __future__ import annotations

import ctypes
import math
import os
from typing import List, Optional, Sequence, Tuple

import numpy as np

__all__ = ["FIELDS", "Gemm", "find_gemm"]

KIND, ADDRESS, TRANS_A, TRANS_B, M, N, K, A, LDA, B, LDB, C, LDC, BATCH, STEP_A, STEP_B, STEP_C, BIAS = range(
    18
)
FIELDS = 18
FLOAT32, FLOAT64 = 1, 2  # KIND: sgemm, dgemm
_PLANS = 512  # products planned before the plans are forgotten
_MAX_ROWS = 4096  # a stack whose batch dims do not flatten gives a row per outer index

NO_TRANS, TRANS = 111, 112  # CBLAS_TRANSPOSE
# 64-bit-index CBLAS names, NumPy's bundled OpenBLAS first
_SYMBOLS = ("scipy_cblas_{}gemm64_", "cblas_{}gemm64_")


class Gemm:
    """The addresses of one BLAS library's ``sgemm``/``dgemm`` and the rows that call them.

    A training step makes the same products at every step, on new arrays: the rows for a
    product's shapes, strides and split are planned once (relative to the operands' first
    elements) and each call only adds the three addresses."""

    def __init__(self, addresses: dict) -> None:
        self.addresses = addresses  # dtype -> (KIND, address)
        self.plans: dict = {}  # (shapes, strides, dtypes, k) -> (rows without addresses, bounds) or None

    def split(
        self,
        a: np.ndarray,
        b: np.ndarray,
        out: np.ndarray,
        k: int,
        bias: Optional[np.ndarray] = None,
        cut: Optional[Tuple[str, List[int]]] = None,
    ) -> Optional[Tuple[np.ndarray, List[int]]]:
        """``a @ b`` (plus ``bias``, a vector along the result's last dim, when given) into
        ``out`` shared among ``k`` threads (or fewer when there is less to share):
        ``(rows, bounds)``, thread ``t`` running ``rows[bounds[t]:bounds[t + 1]]``; ``None``
        when the product or the bias does not qualify. A stack is split by its batch, a
        single product as ``cut`` says (``("rows" or "columns", bounds)``, see
        :mod:`disttorch.kernels.product_cuts`), else by the rows or the columns of ``out``,
        whichever are more, in equal parts."""
        key = (a.shape, b.shape, out.shape, a.strides, b.strides, out.strides, a.dtype, b.dtype, out.dtype, k)
        key += (None,) if cut is None else (cut[0], tuple(cut[1]))
        if bias is not None:
            if bias.dtype != out.dtype or bias.shape != out.shape[-1:] or bias.strides != (out.itemsize,):
                return None
            key += (True,)
        plan = self.plans.get(key, False)
        if plan is False:
            if len(self.plans) >= _PLANS:
                self.plans.clear()
            plan = self.plans[key] = self._plan(a, b, out, k, bias is not None, cut)
        if plan is None:
            return None
        where = [_address(x) for x in (a, b, out)]
        if where[0] == where[1] or np.may_share_memory(out, a) or np.may_share_memory(out, b):
            return None  # x @ x.T is NumPy's syrk; an out that overlaps needs NumPy's copy
        if bias is not None and np.may_share_memory(out, bias):
            return None
        offsets = np.zeros(FIELDS, np.int64)  # (one addition for the rows: a few us less per product)
        offsets[A], offsets[B], offsets[C] = where
        if bias is not None:
            offsets[BIAS] = _address(bias)
        rows = plan[0] + offsets
        return rows, plan[1]

    def rows(
        self, a: np.ndarray, b: np.ndarray, out: np.ndarray, bias: Optional[np.ndarray] = None
    ) -> Optional[np.ndarray]:
        """The whole product ``a @ b`` (plus ``bias``) into ``out`` as rows for one thread, or
        ``None``."""
        work = self.split(a, b, out, 1, bias)
        return None if work is None else work[0]

    def _plan(
        self, a: np.ndarray, b: np.ndarray, out: np.ndarray, k: int, biased: bool, cut: Optional[tuple]
    ) -> Optional[tuple]:
        """:meth:`split`'s rows with the operands at address 0, and its bounds, or ``None``."""
        kind = self.addresses.get(out.dtype)
        if kind is None or a.dtype != out.dtype or b.dtype != out.dtype or not out.dtype.isnative:
            return None
        m, n, depth = a.shape[-2], b.shape[-1], a.shape[-1]
        if 0 in out.shape or depth == 0 or m == 1 or n == 1:
            return None  # nothing to compute, or NumPy's gemv
        size = out.itemsize
        forms = [_form(x.strides[-2:], r, c, size) for x, r, c in ((a, m, depth), (b, depth, n), (out, m, n))]
        if None in forms or forms[2][0] != NO_TRANS:
            return None
        batch = out.shape[:-2]
        strides = [_batch_strides(x, batch) for x in (a, b, out)]
        flat = _flat_from(strides, batch)
        outer, inner = batch[:flat], math.prod(batch[flat:])
        if math.prod(outer) > _MAX_ROWS:
            return None
        steps = [
            next((s for s, n in zip(x[::-1], batch[::-1]) if n > 1), 0) if inner > 1 else 0 for x in strides
        ]
        (ta, lda), (tb, ldb), (_, ldc) = forms
        whole = [*kind, ta, tb, m, n, depth, 0, lda, 0, ldb, 0, ldc, inner, *steps, 0]
        if outer and math.prod(outer) > 1:  # one row per index of the outer batch dims
            rows = np.array([whole] * math.prod(outer), dtype=np.int64)
            for r, index in enumerate(np.ndindex(*outer)):
                for at, x in zip((A, B, C), strides):
                    rows[r, at] = sum(i * s for i, s in zip(index, x))
            k = min(k, len(rows))
            return rows, [len(rows) * t // k for t in range(k + 1)]
        if inner > 1:
            field, shifts = BATCH, [(A, steps[0]), (B, steps[1]), (C, steps[2])]
            k = min(k, inner)
            bounds = [inner * t // k for t in range(k + 1)]
        else:  # a single product: as ``cut`` says, else by its longer side in equal parts
            axis, bounds = cut if cut is not None else ("rows" if m >= n else "columns", None)
            if axis == "rows":
                field, shifts = M, [(A, a.strides[-2]), (C, out.strides[-2])]
            else:
                field, shifts = N, [(B, b.strides[-1]), (C, out.strides[-1])] + [(BIAS, size)] * biased
            if bounds is None:
                k = min(k, whole[field])
                bounds = [whole[field] * t // k for t in range(k + 1)]
        k = len(bounds) - 1
        rows = np.array([whole] * k, dtype=np.int64)
        for t, (start, stop) in enumerate(zip(bounds, bounds[1:])):
            rows[t, field] = stop - start
            for at, shift in shifts:
                rows[t, at] = start * shift
        return rows, list(range(k + 1))


def find_gemm(paths: Sequence[str]) -> Optional[Gemm]:
    """The first of these loaded BLAS libraries that NumPy ships inside its own package
    (another library's ``gemm`` may round otherwise) and that has 64-bit-index CBLAS
    ``sgemm`` and ``dgemm`` (NumPy's OpenBLAS), or ``None``."""
    home = os.path.dirname(os.path.abspath(np.__file__))  # .../numpy; wheels: .../numpy.libs too
    for path in paths:
        if not os.path.abspath(path).startswith(home):
            continue
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _SYMBOLS:
            try:
                single, double = (getattr(library, name.format(t)) for t in "sd")
            except AttributeError:
                continue
            return Gemm(
                {
                    np.dtype(np.float32): (FLOAT32, ctypes.cast(single, ctypes.c_void_p).value),
                    np.dtype(np.float64): (FLOAT64, ctypes.cast(double, ctypes.c_void_p).value),
                }
            )
    return None


def _form(strides: Tuple[int, int], rows: int, cols: int, size: int) -> Optional[Tuple[int, int]]:
    """``(CBLAS_TRANSPOSE, leading dimension)`` of a ``rows x cols`` matrix with these byte
    strides, or ``None`` when BLAS cannot read it in place."""
    across, down = strides[1], strides[0]
    if (across == size or cols == 1) and (rows == 1 or (down % size == 0 and down >= cols * size)):
        return NO_TRANS, down // size if rows > 1 else cols
    if (down == size or rows == 1) and (cols == 1 or (across % size == 0 and across >= rows * size)):
        return TRANS, across // size if cols > 1 else rows
    return None


def _batch_strides(x: np.ndarray, batch: tuple) -> tuple:
    """``x``'s byte strides along the result's batch dims ``batch`` (0 where it is broadcast)."""
    own = x.shape[:-2]
    return (0,) * (len(batch) - len(own)) + tuple(s if n > 1 else 0 for s, n in zip(x.strides[:-2], own))


def _flat_from(strides: List[tuple], batch: tuple) -> int:
    """The first batch dim from which every array's batch dims flatten into one stride (a
    dim of length 1 never breaks the run)."""
    cut = len(batch)
    inner = None  # (length, strides) of the last dim longer than one in the run so far
    for d in range(len(batch) - 1, -1, -1):
        if batch[d] == 1:
            cut = d
            continue
        if inner is not None and any(x[d] != x[inner[0]] * batch[inner[0]] for x in strides):
            break
        inner, cut = (d,), d
    return cut


def _address(x: np.ndarray) -> int:
    return x.ctypes.data  # (a third faster than __array_interface__, which builds a dict)
