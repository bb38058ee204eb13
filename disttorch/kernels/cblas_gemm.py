"""Matrix products run from compiled code without the GIL: NumPy's own BLAS (``cblas_sgemm``
/ ``cblas_dgemm`` of its bundled 64-bit-index OpenBLAS), called through its address from a
numba loop (the ``fast`` extra).

The op pool's workers run the parts of a split matrix product this way, inside the loop in
which they wait (:func:`disttorch.kernels.spin_wait.serve`), so a part starts as soon as it
is posted: a part that is Python code (a ``np.matmul`` on slices) must first take the GIL,
which the caller often holds just then. A part is a list of rows of integers, each a
product as :mod:`disttorch.kernels.gemm_parts` lays it out; each runs as the CBLAS call
``np.matmul`` makes for such operands.

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from disttorch.kernels.gemm_parts import (
    ADDRESS,
    BATCH,
    BIAS,
    FLOAT32,
    KIND,
    LDA,
    LDB,
    LDC,
    STEP_A,
    STEP_B,
    STEP_C,
    TRANS_A,
    TRANS_B,
    A,
    B,
    C,
    K,
    M,
    N,
)
from disttorch.kernels.jit import njit

__all__ = ["gemm", "run_parts"]

_ROW_MAJOR = 101  # CBLAS_ORDER


def _gemm(scalar: ir.Type):
    """An intrinsic ``gemm(address, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc)`` that
    calls the CBLAS ``gemm`` at ``address`` with ``alpha = 1``, ``beta = 0`` and row-major
    order, for elements of type ``scalar``."""
    i32, i64, address = ir.IntType(32), ir.IntType(64), ir.IntType(8).as_pointer()
    signature = ir.FunctionType(
        ir.VoidType(),
        [i32, i32, i32, i64, i64, i64, scalar, address, i64, address, i64, scalar, address, i64],
    )

    @intrinsic
    def gemm(typingctx, fn, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc):  # noqa: ARG001
        def codegen(context, builder, sig, args):
            fn, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc = args
            call = builder.inttoptr(fn, signature.as_pointer())
            enum = [builder.trunc(x, i32) for x in (trans_a, trans_b)]
            one, zero = ir.Constant(scalar, 1.0), ir.Constant(scalar, 0.0)
            pointers = [builder.inttoptr(x, address) for x in (a, b, c)]
            builder.call(
                call,
                [
                    ir.Constant(i32, _ROW_MAJOR),
                    *enum,
                    m,
                    n,
                    k,
                    one,
                    pointers[0],
                    lda,
                    pointers[1],
                    ldb,
                    zero,
                    pointers[2],
                    ldc,
                ],
            )
            return context.get_dummy_value()

        return types.void(*([types.int64] * 12)), codegen

    return gemm


_sgemm = _gemm(ir.FloatType())
_dgemm = _gemm(ir.DoubleType())


def _pointer(scalar: types.Float):
    """An intrinsic that reads an int64 address as a pointer to ``scalar`` elements."""

    @intrinsic
    def pointer(typingctx, address):  # noqa: ARG001
        def codegen(context, builder, sig, args):
            return builder.inttoptr(args[0], context.get_value_type(sig.return_type))

        return types.CPointer(scalar)(types.int64), codegen

    return pointer


_floats = _pointer(types.float32)
_doubles = _pointer(types.float64)


@njit()
def _add_to_rows(c, ldc, m, n, bias):  # pragma: no cover - compiled
    """``C[i, :] += bias`` for the ``m x n`` row-major ``C`` (pointers to its first element
    and to ``n`` contiguous elements of ``bias``): one rounding each, as NumPy's ``+=``."""
    for i in range(m):
        row = i * ldc
        for j in range(n):
            c[row + j] += bias[j]


@njit()
def gemm(kind, address, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc):  # pragma: no cover - compiled
    """``C = op(A) @ op(B)`` (``m x n``, row-major) through the CBLAS ``gemm`` at ``address``
    for elements of ``kind`` (``gemm_parts.FLOAT32``/``FLOAT64``); ``a``, ``b``, ``c`` are
    addresses, the ``ld``s leading dimensions in elements, the ``trans``es CBLAS's flags."""
    if kind == FLOAT32:
        _sgemm(address, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc)
    else:
        _dgemm(address, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc)


@njit()
def run_parts(parts, count):  # pragma: no cover - compiled
    """Run the first ``count`` rows of ``parts`` (an int64 array of ``gemm_parts.FIELDS``
    columns), each product followed by its bias where it has one."""
    for p in range(count):
        row = parts[p]
        for i in range(row[BATCH]):
            a, b, c = row[A] + i * row[STEP_A], row[B] + i * row[STEP_B], row[C] + i * row[STEP_C]
            gemm(
                row[KIND],
                row[ADDRESS],
                row[TRANS_A],
                row[TRANS_B],
                row[M],
                row[N],
                row[K],
                a,
                row[LDA],
                b,
                row[LDB],
                c,
                row[LDC],
            )
            if row[BIAS] == 0:
                continue
            if row[KIND] == FLOAT32:
                _add_to_rows(_floats(c), row[LDC], row[M], row[N], _floats(row[BIAS]))
            else:
                _add_to_rows(_doubles(c), row[LDC], row[M], row[N], _doubles(row[BIAS]))
