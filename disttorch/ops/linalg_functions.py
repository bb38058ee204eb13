"""The functions of ``torch.linalg`` (public as ``disttorch.linalg``) on NumPy/LAPACK.

Every function takes batches of matrices (``(*, m, n)``) in float32 or float64. The
decompositions (inv, solve, det, slogdet, eigh, svd, qr, cholesky, matrix_exp,
solve_triangular) are Functions with PyTorch's backward formulas; norms, pinv, lstsq,
matrix_power, cross, vecdot, multi_dot, vander, tensorinv/tensorsolve, householder_product
are built from differentiable ops. Differences from PyTorch: complex tensors are not
supported, so ``eig``/``eigvals`` return the real eigen-decomposition of matrices whose
eigenvalues are real and raise otherwise; ``lu``, ``lu_factor`` and ``lu_solve`` are
differentiable (``linalg_lu.py``), ``ldl_*`` have no gradient; decompositions are not twice
differentiable.

They live in the ops layer (the decompositions' Functions in ``linalg_decomp.py``, the LU
kernel in ``kernels/lu.py``) so that the top-level legacy names (``disttorch.det``, ...) in
``mathfns`` call them without importing upward; ``disttorch/linalg`` is their namespace.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._dtype import FLOAT_KINDS
from .._tensor import Tensor
from ..autograd.autocast_state import autocast_op
from ..autograd.function import Function, named_node
from ..kernels.lu import lu_factor_np
from ..kernels.threads import lapack
from ._helpers import _return_type, dims_tuple, scalar_type_name
from .dtype_rules import refuse_kernel, require_same_scalar_type
from .linalg import matmul
from .linalg_decomp import (
    QR,
    SVD,
    Cholesky,
    Det,
    Eigh,
    Inv,
    LinAlgError,
    MatrixExp,
    Slogdet,
    Solve,
    SolveTriangular,
    tri_solve,
)
from .linalg_eig import Eig, check_eig_input
from .linalg_householder import householder_product
from .linalg_low_precision import refuse_low_precision
from .linalg_lu import lu_factor_parts, lu_solve_parts, lu_unpacked
from .opmath import is_low
from .reduction import check_no_identity, check_norm_dtype, p_norm
from .shape import cat, sum_to

__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "householder_product",
    "inv",
    "inv_ex",
    "ldl_factor",
    "ldl_factor_ex",
    "ldl_solve",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]


# ---------------------------------------------------------------------- result tuples
# PyTorch's torch.return_types.linalg_* named tuples
SlogdetResult = _return_type("linalg_slogdet", ("sign", "logabsdet"))
EighResult = _return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
EigResult = _return_type("linalg_eig", ("eigenvalues", "eigenvectors"))
SVDResult = _return_type("linalg_svd", ("U", "S", "Vh"))
QRResult = _return_type("linalg_qr", ("Q", "R"))
LstsqResult = _return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
LUFactorResult = _return_type("linalg_lu_factor", ("LU", "pivots"))
LUFactorExResult = _return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
LUResult = _return_type("linalg_lu", ("P", "L", "U"))
ExResult = _return_type("linalg_solve_ex", ("result", "info"))
CholeskyExResult = _return_type("linalg_cholesky_ex", ("L", "info"))
InvExResult = _return_type("linalg_inv_ex", ("inverse", "info"))
LDLFactorResult = _return_type("linalg_ldl_factor", ("LD", "pivots"))
LDLFactorExResult = _return_type("linalg_ldl_factor_ex", ("LD", "pivots", "info"))


# ---------------------------------------------------------------------- checks
def _check_float(name: str, A: Tensor, complex_ok: bool = False) -> None:
    """``A`` must be float32/float64 (or complex, for the functions that support it)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A._data.dtype.kind == "c" and not complex_ok:  # (PyTorch's takes them)
        raise NotImplementedError(f"{name}: complex inputs are not supported by disttorch yet")
    refuse_low_precision(name, A._data.dtype, A._data.shape)
    if A._data.dtype.kind not in "fc" or A._data.dtype == np.float16:
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got "
            f"{scalar_type_name(A._data.dtype)}"
        )


def _check_matrix(
    name: str, A: Tensor, square: bool = True, complex_ok: bool = False, any_dtype: bool = False
) -> None:
    if not any_dtype:
        _check_float(name, A, complex_ok)
    if A._data.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    m, n = A._data.shape[-2:]
    if square and m != n:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {m} by {n} matrices")


def _info(A: Tensor) -> Tensor:
    return Tensor._make(np.zeros(A._data.shape[:-2], dtype=np.int32))


# ---------------------------------------------------------------------- inverses and solves
def inv(A: Tensor, *, out: Any = None) -> Tensor:
    """The inverse of each square matrix of ``A``; raises :class:`LinAlgError` if singular."""
    _check_matrix("linalg.inv", A, complex_ok=True)
    return Inv.apply(A)


def inv_ex(A: Tensor, *, check_errors: bool = False, out: Any = None) -> InvExResult:
    """``(inverse, info)``; ``info`` is 0 where the inverse exists, else the LU pivot index."""
    _check_matrix("linalg.inv_ex", A, complex_ok=True)
    try:
        return InvExResult(Inv.apply(A), _info(A))
    except LinAlgError:
        if check_errors:
            raise
        info = _zero_pivot(lu_factor_np(A._data)[0])
        return InvExResult(Tensor._make(lapack(np.linalg.pinv, A._data)), Tensor._make(info))


def _vector_rhs(A: Tensor, B: Tensor) -> bool:
    """PyTorch's rule: ``B`` is a (batch of) vector(s) if it is 1-D or has one dim fewer
    than ``A`` and matches ``A``'s shape without the last dim."""
    b = B._data
    return b.ndim == 1 or (b.ndim == A._data.ndim - 1 and b.shape == A._data.shape[:-1])


def solve(A: Tensor, B: Tensor, *, left: bool = True, out: Any = None) -> Tensor:
    """The solution ``X`` of ``A X = B`` (``X A = B`` with ``left=False``); ``B`` may be a
    (batch of) vector(s)."""
    _check_matrix("linalg.solve", A, complex_ok=True)
    _check_float("linalg.solve", B, complex_ok=True)
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(
            f"linalg.solve: Expected A and B to have the same dtype, but found "
            f"A of type {A.dtype.name} and B of type {B.dtype.name} instead"
        )
    vector = _vector_rhs(A, B) and left
    n = A._data.shape[-1]
    rows, cols = (B._data.shape[-1], 1) if vector else B._data.shape[-2:]
    if (rows if left else cols) != n:
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({A._data.shape[-2]}x{n} and {rows}x{cols})"
        )
    if vector:
        return Solve.apply(A, B.unsqueeze(-1), True).squeeze(-1)
    batch = np.broadcast_shapes(A._data.shape[:-2], B._data.shape[:-2])
    A2 = A.expand(batch + A._data.shape[-2:]) if A._data.shape[:-2] != batch else A
    B2 = B.expand(batch + B._data.shape[-2:]) if B._data.shape[:-2] != batch else B
    return Solve.apply(A2, B2, left)


def solve_ex(
    A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False, out: Any = None
) -> ExResult:
    """``(result, info)`` of :func:`solve`: a singular matrix gives ``info`` its first zero
    LU pivot (1-based) and NaN solutions (PyTorch's are its LU's inf and NaN), raising only
    with ``check_errors``."""
    try:
        return ExResult(solve(A, B, left=left), _info(A))
    except LinAlgError:
        if check_errors:
            raise
    info = _zero_pivot(lu_factor_np(A._data)[0])
    singular = Tensor._make((info != 0)[..., None, None])
    eye = Tensor._make(np.eye(A._data.shape[-1], dtype=A._data.dtype))
    result = solve(A.where(~singular, eye), B, left=left)  # (the others solved as they are)
    nan = Tensor._make(np.asarray(np.nan, dtype=result._data.dtype))
    flag = singular if result.dim() == A.dim() else singular[..., 0]
    return ExResult(result.where(~flag, nan), Tensor._make(info))


def _zero_pivot(lu_: np.ndarray) -> np.ndarray:
    """LAPACK's ``info`` of each LU factorisation: its first zero pivot (1-based), 0 where none."""
    diag = np.diagonal(lu_, axis1=-2, axis2=-1) == 0
    if not diag.shape[-1]:
        return np.zeros(diag.shape[:-1], np.int32)
    return np.where(diag.any(-1), diag.argmax(-1) + 1, 0).astype(np.int32)


def solve_triangular(
    A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False, out: Any = None
) -> Tensor:
    """Solve ``A X = B`` (or ``X A = B``) for a triangular ``A`` (only its ``upper`` or lower
    triangle is read; ``unitriangular`` takes its diagonal as ones)."""
    _check_matrix("linalg.solve_triangular", A)
    _check_float("linalg.solve_triangular", B)
    return SolveTriangular.apply(A, B, upper, left, unitriangular)


def tensorinv(A: Tensor, ind: int = 2, *, out: Any = None) -> Tensor:
    """The tensor ``X`` with ``tensordot(X, A, ind) = I`` (``A``'s first ``ind`` dims form the
    rows)."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = A.shape[:ind], A.shape[ind:]
    nr, nc = math.prod(rows), math.prod(cols)
    if nr != nc:
        raise RuntimeError(
            f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {nc} != {nr}"
        )
    return inv(A.reshape(nr, nc)).reshape(tuple(cols) + tuple(rows))


def tensorsolve(A: Tensor, B: Tensor, dims: Any = None, *, out: Any = None) -> Tensor:
    """The ``X`` with ``tensordot(A, X, X.ndim) = B``."""
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        A = A.permute(tuple([d for d in range(A.dim()) if d not in dims] + dims))
    out_shape = tuple(A.shape[B.dim() :])
    n = math.prod(out_shape)
    return solve(A.reshape(-1, n), B.reshape(-1)).reshape(out_shape)


# ---------------------------------------------------------------------- determinants
def det(A: Tensor, *, out: Any = None) -> Tensor:
    """The determinant of each square matrix of ``A``."""
    _check_matrix("linalg.det", A, complex_ok=True)
    return Det.apply(A)


def slogdet(A: Tensor, *, out: Any = None) -> SlogdetResult:
    """``(sign, logabsdet)`` of each square matrix; gradients flow through ``logabsdet``."""
    _check_matrix("linalg.slogdet", A, complex_ok=True)
    return SlogdetResult(*Slogdet.apply(A))


# ---------------------------------------------------------------------- eigen and singular values
def eigh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices (reading the ``UPLO``
    triangle); complex Hermitian matrices give real eigenvalues."""
    _check_matrix("linalg.eigh", A, complex_ok=True)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return EighResult(*Eigh.apply(A, UPLO))


def eigvalsh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> Tensor:
    """Eigenvalues (ascending) of symmetric matrices."""
    return eigh(A, UPLO)[0]


def eig(A: Tensor, *, out: Any = None) -> EigResult:
    """Eigenvalues and eigenvectors of a general square matrix (a batch of them): complex
    tensors (complex64 for float32 input), each eigenvector of unit norm, as LAPACK's geev
    gives them; differentiable (see :class:`disttorch.ops.linalg_eig.Eig`)."""
    check_eig_input("linalg.eig", A)
    return EigResult(*Eig.apply(A))


def eigvals(A: Tensor, *, out: Any = None) -> Tensor:
    """The (complex) eigenvalues of a general square matrix, see :func:`eig`."""
    check_eig_input("linalg.eigvals", A)
    return Eig.apply(A)[0]


def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None, out: Any = None) -> SVDResult:
    """``A = U diag(S) Vh`` with singular values in descending order (complex ``A``: real
    ``S``; gradients through ``S`` only)."""
    _check_matrix("linalg.svd", A, square=False, complex_ok=True)
    return SVDResult(*SVD.apply(A, full_matrices))


def svdvals(A: Tensor, *, driver: str | None = None, out: Any = None) -> Tensor:
    """Singular values of ``A``, descending."""
    return svd(A, full_matrices=False)[1]


def matrix_rank(
    A: Tensor,
    tol: Any = None,
    hermitian: bool = False,
    *,
    atol: Any = None,
    rtol: Any = None,
    out: Any = None,
) -> Tensor:
    """Number of singular values above ``max(atol, rtol * largest)`` (``rtol`` defaults to
    ``eps * max(m, n)`` when neither is given)."""
    _check_matrix("linalg.matrix_rank", A, square=False)
    x = A._data
    s = np.abs(lapack(np.linalg.eigvalsh, x)) if hermitian else lapack(np.linalg.svd, x, compute_uv=False)
    if tol is not None:
        atol, rtol = tol, 0.0
    atol_v = 0.0 if atol is None else np.asarray(atol._data if isinstance(atol, Tensor) else atol)
    if rtol is None:
        rtol = np.finfo(x.dtype).eps * max(x.shape[-2:]) if atol is None or np.all(atol_v == 0) else 0.0
    rtol_v = np.asarray(rtol._data if isinstance(rtol, Tensor) else rtol)
    smax = s.max(-1, initial=0.0)
    thresh = np.maximum(atol_v, rtol_v * smax)
    return Tensor._make(np.asarray((s > thresh[..., None]).sum(-1), dtype=np.int64))


# ---------------------------------------------------------------------- factorisations
def qr(A: Tensor, mode: str = "reduced", *, out: Any = None) -> QRResult:
    """``A = QR`` with ``mode`` 'reduced', 'complete' or 'r' (Q is empty)."""
    _check_matrix("linalg.qr", A, square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' "
            "(default), 'r', or 'complete'"
        )
    q, r = QR.apply(A, mode)
    if mode == "r":
        q = Tensor._make(np.zeros((0,), dtype=A._data.dtype))
    return QRResult(q, r)


@autocast_op("fp32")
def cholesky(A: Tensor, *, upper: bool = False, out: Any = None) -> Tensor:
    """Lower (or ``upper``) Cholesky factor of symmetric positive-definite matrices."""
    _check_matrix("linalg.cholesky", A)
    return Cholesky.apply(A, upper)


def cholesky_ex(
    A: Tensor, *, upper: bool = False, check_errors: bool = False, out: Any = None
) -> CholeskyExResult:
    """``(L, info)``; ``info`` is the order of the first non-positive-definite leading minor
    (0 when the factorisation succeeded)."""
    _check_matrix("linalg.cholesky_ex", A)
    try:
        return CholeskyExResult(Cholesky.apply(A, upper), _info(A))
    except LinAlgError:
        if check_errors:
            raise
    flat = A._data.reshape((-1,) + A._data.shape[-2:])
    info = np.zeros(flat.shape[0], dtype=np.int32)
    out_l = np.zeros_like(flat)
    for b, mat in enumerate(flat):
        try:
            out_l[b] = lapack(np.linalg.cholesky, mat)
        except np.linalg.LinAlgError:
            info[b] = next(o for o in range(1, mat.shape[0] + 1) if not _is_pd(mat[:o, :o]))
    out_l = out_l.reshape(A._data.shape)
    return CholeskyExResult(
        Tensor._make(np.swapaxes(out_l, -1, -2).copy() if upper else out_l),
        Tensor._make(info.reshape(A._data.shape[:-2])),
    )


def _is_pd(m: np.ndarray) -> bool:
    try:
        lapack(np.linalg.cholesky, m)
        return True
    except np.linalg.LinAlgError:
        return False


def lu_factor(A: Tensor, *, pivot: bool = True, out: Any = None) -> LUFactorResult:
    """Compact LU factorisation with partial pivoting: ``(LU, pivots)`` (1-based int32
    pivots, as LAPACK's)."""
    _check_matrix("linalg.lu_factor", A, square=False)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    return LUFactorResult(*lu_factor_parts(A))


def lu_factor_ex(
    A: Tensor, *, pivot: bool = True, check_errors: bool = False, out: Any = None
) -> LUFactorExResult:
    """``(LU, pivots, info)``; ``info`` is the first zero pivot (1-based) or 0."""
    lu_, piv = lu_factor(A, pivot=pivot)
    return LUFactorExResult(lu_, piv, Tensor._make(_zero_pivot(lu_._data)))


def lu(A: Tensor, *, pivot: bool = True, out: Any = None) -> LUResult:
    """``A = P L U``: permutation, unit lower-triangular and upper-triangular factors."""
    return LUResult(*lu_unpacked(*lu_factor(A, pivot=pivot)))


@autocast_op("fp32")
def lu_solve(
    LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False, out: Any = None
) -> Tensor:
    """Solve ``A X = B`` from ``lu_factor(A)``'s result."""
    refuse_low_precision("linalg.lu_solve", LU._data.dtype)
    return lu_solve_parts(LU, pivots, B, left, adjoint)


def ldl_factor_ex(
    A: Tensor, *, hermitian: bool = False, check_errors: bool = False, out: Any = None
) -> LDLFactorExResult:
    """``LD`` compact factorisation of a symmetric matrix without pivoting (``pivots`` are
    the identity, 1-based): ``A = L D L^T`` with ``L`` unit lower-triangular, ``D``
    diagonal. Unlike LAPACK's ``sytrf`` no 2x2 pivot blocks are used."""
    _check_matrix("linalg.ldl_factor", A)
    low = lapack(np.linalg.cholesky, A._data) if _is_pd_batch(A._data) else None
    if low is None:
        raise NotImplementedError("linalg.ldl_factor: only positive-definite matrices are supported")
    d = np.diagonal(low, axis1=-2, axis2=-1)
    unit = low / d[..., None, :]
    n = A._data.shape[-1]
    ld = np.tril(unit, -1) + (d * d)[..., None, :] * np.eye(n, dtype=A._data.dtype)
    piv = np.broadcast_to(np.arange(1, n + 1, dtype=np.int32), A._data.shape[:-1]).copy()
    return LDLFactorExResult(Tensor._make(ld), Tensor._make(piv), _info(A))


def _is_pd_batch(x: np.ndarray) -> bool:
    try:
        lapack(np.linalg.cholesky, x)
        return True
    except np.linalg.LinAlgError:
        return False


def ldl_factor(A: Tensor, *, hermitian: bool = False, out: Any = None) -> LDLFactorResult:
    """``(LD, pivots)`` of :func:`ldl_factor_ex`."""
    ld, piv, _ = ldl_factor_ex(A, hermitian=hermitian)
    return LDLFactorResult(ld, piv)


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False, out: Any = None) -> Tensor:
    """Solve ``A X = B`` from :func:`ldl_factor`'s result."""
    refuse_low_precision("linalg.ldl_solve", LD._data.dtype)
    ld = LD._data
    n = ld.shape[-1]
    low = np.tril(ld, -1) + np.eye(n, dtype=ld.dtype)
    d = np.diagonal(ld, axis1=-2, axis2=-1)
    y = tri_solve(low, B._data, upper=False, unit=True)
    return Tensor._make(tri_solve(np.swapaxes(low, -1, -2), y / d[..., :, None], upper=True, unit=True))


# ---------------------------------------------------------------------- composite ops
def pinv(
    A: Tensor,
    *,
    atol: Any = None,
    rtol: Any = None,
    hermitian: bool = False,
    out: Any = None,
    rcond: Any = None,
) -> Tensor:
    """Moore-Penrose pseudo-inverse via the SVD (or ``eigh`` with ``hermitian=True``);
    singular values at or below ``max(atol, rtol * largest)`` are dropped."""
    _check_matrix("linalg.pinv", A, square=False)
    if rcond is not None:
        rtol = rcond
    if rtol is None:
        rtol = np.finfo(A._data.dtype).eps * max(A._data.shape[-2:]) if atol is None else 0.0
    atol = 0.0 if atol is None else atol
    if hermitian:
        w, v = eigh(A)
        smax = w.detach().abs().amax(-1, keepdim=True)
        keep = w.detach().abs() > _maximum(atol, rtol * smax)
        winv = (1 / w.masked_fill(~keep, 1)).masked_fill(~keep, 0)
        return (v * winv.unsqueeze(-2)) @ v.mT
    u, s, vh = svd(A, full_matrices=False)
    smax = s.detach()[..., :1]
    keep = s.detach() > _maximum(atol, rtol * smax)
    sinv = (1 / s.masked_fill(~keep, 1)).masked_fill(~keep, 0)
    return (vh.mT * sinv.unsqueeze(-2)) @ u.mT


def _maximum(a: Any, b: Tensor) -> Tensor:
    a = a if isinstance(a, Tensor) else Tensor._make(np.asarray(a, dtype=b._data.dtype))
    return Tensor._make(np.maximum(a._data[..., None] if a._data.ndim else a._data, b._data))


@autocast_op("fp32")
def lstsq(A: Tensor, B: Tensor, rcond: Any = None, *, driver: str | None = None) -> LstsqResult:
    """Least-squares solution of ``A X = B`` (``min ||A X - B||``), via the pseudo-inverse.

    As PyTorch's default CPU driver 'gelsy': ``rank`` is returned, ``residuals`` and
    ``singular_values`` are empty (with driver 'gelsd'/'gelss' the singular values are
    returned, and the squared residuals where ``m > n`` and ``A`` has full rank)."""
    _check_matrix("linalg.lstsq", A, square=False)
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(
            f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, "
            f"gelsd, gelss), but got {driver}"
        )
    vec = B.dim() == A.dim() - 1
    B2 = B.unsqueeze(-1) if vec else B
    x = matmul(pinv(A, rtol=rcond), B2)
    m, n = A.shape[-2:]
    s = lapack(np.linalg.svd, A._data, compute_uv=False)
    eps = np.finfo(A._data.dtype).eps * max(m, n) if rcond is None else rcond
    rank = Tensor._make((s > eps * s[..., :1]).sum(-1).astype(np.int64))
    empty = Tensor._make(np.zeros((0,), dtype=A._data.dtype))
    residuals, sv = empty, empty
    if driver in ("gelsd", "gelss"):
        sv = Tensor._make(s)
        if m > n and np.all(rank._data == n):
            residuals = ((matmul(A, x) - B2) ** 2).sum(-2)
    if driver == "gels":
        rank = Tensor._make(np.zeros((0,), dtype=np.int64))
    return LstsqResult(x.squeeze(-1) if vec else x, residuals, rank, sv)


def matrix_power(A: Tensor, n: int, *, out: Any = None) -> Tensor:
    """``A`` to the integer power ``n`` by repeated squaring (``n < 0`` inverts first); of
    any dtype whose matrix product exists (integers too) for ``n >= 0``."""
    _check_matrix("linalg.matrix_power", A, any_dtype=True)
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if n == 0:  # the identity, as a copy over A's clone (a zero gradient to A)
        eye = np.broadcast_to(np.eye(A.shape[-1], dtype=A._data.dtype), A._data.shape)
        return A.clone().copy_(Tensor._make(eye))
    if n == 1:
        return A.clone()
    base = inv(A) if n < 0 else A
    n = abs(int(n))
    result = None
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential of each square matrix of ``A`` (real or complex; a float16 or
    bfloat16 one computed in float32 and rounded)."""
    if isinstance(A, Tensor) and is_low(A._data.dtype):
        return matrix_exp(A.float()).to(A.dtype)
    _check_matrix("linalg.matrix_exp", A, complex_ok=True)
    return MatrixExp.apply(A)


def vector_norm(
    x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, out: Any = None
) -> Tensor:
    """``(sum |x|^ord)^(1/ord)`` over ``dim`` (all elements by default); ``ord`` may be
    ``inf``, ``-inf`` or 0 (the number of non-zeros). One node, as PyTorch's."""
    return named_node(_vector_norm(x, ord, dim, keepdim, dtype), "LinalgVectorNormBackward0")


def _vector_norm(x: Tensor, ord: Any, dim: Any, keepdim: bool, dtype: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"linalg.vector_norm(): argument 'x' must be Tensor, not {type(x).__name__}")
    if x._data.dtype.kind not in FLOAT_KINDS + "c":
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as "
            f"input. Got {scalar_type_name(x._data.dtype)}"
        )
    own_dtype = x._data.dtype
    if dtype is not None:
        check_norm_dtype(x, dtype)
        x = x.to(dtype)
    if x._data.dtype.kind == "c":  # the norm of the moduli (a real result, as PyTorch's)
        x = x.abs()
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        dims_tuple(dim, x.dim())  # PyTorch's IndexError for a dim out of range
    if ord < 0 or ord == math.inf:
        check_no_identity(x, ord, dim)
    return p_norm(x, ord, dim, keepdim, own_dtype)


def _amax_or_zero(s: Tensor, dim: int, keepdim: bool) -> Tensor:
    """The largest of the non-negative ``s`` along ``dim``; 0 along an empty ``dim`` (PyTorch's
    matrix norms of empty matrices)."""
    return s.amax(dim, keepdim=keepdim) if s.shape[dim] else s.sum(dim, keepdim=keepdim)


def matrix_norm(
    A: Tensor,
    ord: Any = "fro",
    dim: tuple = (-2, -1),
    keepdim: bool = False,
    *,
    dtype: Any = None,
    out: Any = None,
) -> Tensor:
    """Matrix norms over the two ``dim``: 'fro', 'nuc', ``inf``, ``-inf``, 1, -1, 2, -2."""
    if ord in ("nuc", 2, -2) or not is_low(A._data.dtype):  # (the others are sums: 16 bits do)
        _check_float("linalg.matrix_norm", A, complex_ok=True)
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if dtype is not None:
        A = A.to(dtype)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    d0, d1 = dim[0] % A.dim(), dim[1] % A.dim()
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        moved = A.movedim((d0, d1), (-2, -1))
        s = svdvals(moved)
        r = s.sum(-1) if ord == "nuc" else (_amax_or_zero(s, -1, False) if ord == 2 else s.amin(-1))
        if keepdim:
            r = r.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
        return r
    if ord in (1, -1, math.inf, -math.inf):
        sum_dim, other = (d0, d1) if ord in (1, -1) else (d1, d0)
        s = A.abs().sum(sum_dim, keepdim=True)
        r = _amax_or_zero(s, other, True) if ord > 0 else s.amin(other, keepdim=True)
        return r if keepdim else r.squeeze((d0, d1))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(
    A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, out: Any = None
) -> Tensor:
    """A vector norm (1-D input, or an int ``dim``) or a matrix norm (2-D input, a 2-tuple
    ``dim``, or a string ``ord``); ``ord=None`` is the 2-norm / Frobenius norm."""
    if isinstance(dim, int):
        dim = (dim,)
    if ord is not None and dim is None and A.dim() > 2:
        raise RuntimeError(
            f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D."
        )
    if (
        dim is not None
        and len(dim) == 2
        or (dim is None and ord is not None and A.dim() == 2)
        or isinstance(ord, str)
    ):
        return matrix_norm(
            A, "fro" if ord is None else ord, tuple(dim) if dim else (-2, -1), keepdim, dtype=dtype
        )
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def cond(A: Tensor, p: Any = None, *, out: Any = None) -> Tensor:
    """Condition number: ``sigma_max / sigma_min`` for ``p`` in (None, 2, -2), otherwise
    ``norm(A, p) * norm(inv(A), p)``."""
    if p not in (None, 2, -2) and isinstance(A, Tensor):  # (through inv, not the SVD)
        refuse_low_precision("linalg.inv", A._data.dtype)
    _check_matrix("linalg.cond", A, square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = svdvals(A)
        if not s.shape[-1]:  # (an empty matrix: 0, as PyTorch)
            return s.new_zeros(s.shape[:-1])
        return s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def cross(input: Tensor, other: Tensor, *, dim: int = -1, out: Any = None) -> Tensor:
    """Cross product of 3-vectors along ``dim`` (broadcasting); both of one dtype, not bool."""
    refuse_kernel("cross", input, "b")
    require_same_scalar_type(input, other)
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got "
            f"{input.shape[dim]} and {other.shape[dim]}"
        )
    return LinalgCross.apply(input, other, dim % input.dim())


class LinalgCross(Function):
    """The cross product along ``dim`` (``a1 b2 - a2 b1``, ...; broadcasting) as one node;
    the gradients are cross products with ``g`` (of the other input conjugated)."""

    _raw = True
    _node_name = "LinalgCrossBackward0"

    @staticmethod
    def forward(ctx, a, b, dim):
        x, y = np.moveaxis(a._data, dim, 0), np.moveaxis(b._data, dim, 0)
        out = np.stack([x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]], dim)
        if ctx.needs_input_grad:
            ctx.save_for_backward(a, b)
            ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, g):
        a, b = ctx._checked_saved()
        need_a, need_b = ctx.needs_input_grad[:2]
        ga = sum_to(LinalgCross.apply(b.conj(), g, ctx.dim), a.shape) if need_a else None
        gb = sum_to(LinalgCross.apply(g, a.conj(), ctx.dim), b.shape) if need_b else None
        return ga, gb, None


@autocast_op("lower")
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: Any = None) -> Tensor:
    """Dot product of vectors along ``dim`` (broadcasting)."""
    return (x * y).sum(dim)


def multi_dot(tensors: Any, *, out: Any = None) -> Tensor:
    """Product of a chain of matrices (the first/last may be 1-D), in the cheapest order."""
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    first_vec, last_vec = ts[0].dim() == 1, ts[-1].dim() == 1
    if first_vec:
        ts[0] = ts[0].unsqueeze(0)
    if last_vec:
        ts[-1] = ts[-1].unsqueeze(-1)
    for i, t in enumerate(ts):
        if t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    dims = [ts[0].shape[0]] + [t.shape[1] for t in ts]
    for i in range(len(ts) - 1):
        if ts[i].shape[1] != ts[i + 1].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes "
                f"{list(ts[i].shape)} and {list(ts[i + 1].shape)} cannot be multiplied"
            )
    order = _chain_order(dims)
    result = _chain(ts, order, 0, len(ts) - 1)
    if first_vec:
        result = result.squeeze(0)
    if last_vec:
        result = result.squeeze(-1)
    return result


def _chain_order(dims: list) -> list:
    """Matrix-chain dynamic programme: ``split[i][j]`` is where to cut the product i..j."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(ts: list, split: list, i: int, j: int) -> Tensor:
    if i == j:
        return ts[i]
    k = split[i][j]
    return matmul(_chain(ts, split, i, k), _chain(ts, split, k + 1, j))


def vander(x: Tensor, N: int | None = None) -> Tensor:
    """Vandermonde matrix with increasing powers ``x^0, x^1, ..., x^(N-1)`` in the last dim."""
    if is_low(x._data.dtype) or x._data.dtype.kind == "b":
        raise RuntimeError(
            "linalg.vander supports floating point, complex, and integer tensors, but got "
            f"{scalar_type_name(x._data.dtype)}"
        )
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    return vander_powers(x, n)


def vander_powers(x: Tensor, n: int) -> Tensor:
    """``x^0, ..., x^(n-1)`` along a new last dim (``n >= 0``: ``torch.vander`` takes 0 and 1)."""
    powers = [x.unsqueeze(-1) ** 0 if x.is_floating_point() else (x.unsqueeze(-1) * 0 + 1)]
    for _ in range(1, n):
        powers.append(powers[-1] * x.unsqueeze(-1))
    return cat(powers, -1) if n else powers[0][..., :0]


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonals of a batch of matrices (``A.diagonal`` with batch-first defaults)."""
    return A.diagonal(offset, dim1, dim2)
