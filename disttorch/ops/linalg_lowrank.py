"""Low-rank and iterative spectral methods: ``svd_lowrank``, ``pca_lowrank``, ``lobpcg``.

``svd_lowrank`` is the randomised range finder of Halko, Martinsson and Tropp (algorithm 5.1
with ``niter`` subspace iterations), as PyTorch runs it: a Gaussian test matrix from the
global generator, QR after each product, an exact SVD of the small projected matrix. It is
built from differentiable ops (matmul, QR, SVD), so its results have gradients.

``lobpcg`` runs ``kernels/lobpcg.py`` on each matrix of the batch. Its gradient w.r.t. ``A``
(through ``(A + A^T) / 2``, as in PyTorch) is the eigen-decomposition's, restricted to the
``k`` computed pairs: ``dE_i = x_i^T dA x_i`` and ``dx_i = (lambda_i I - A)^+ dA x_i`` on the
complement of ``x_i`` (pairs must be simple). A gradient w.r.t. ``B`` is not implemented.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _random
from .._dtype import get_default_dtype, to_numpy
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.fused_backward import fused_backward
from ..kernels.lobpcg import lobpcg_np
from .linalg import matmul
from .linalg_functions import qr, svd

__all__ = ["lobpcg", "pca_lowrank", "svd_lowrank"]

TENSOR_METHODS: tuple = ()


def _float_dtype(A: Tensor) -> Any:
    return A.dtype if A.is_floating_point() else get_default_dtype()


def _mH(A: Tensor) -> Tensor:
    return A.t() if A.is_sparse else A.mT


def _approximate_basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:
    """An orthonormal ``(m, q)`` basis approximately spanning the range of ``A - M``."""
    R = _random.randn(A.shape[-1], q, dtype=_float_dtype(A))

    def times(X: Tensor, adjoint: bool) -> Tensor:
        Y = matmul(_mH(A), X) if adjoint else matmul(A, X)
        return Y if M is None else Y - matmul(M.mT if adjoint else M, X)

    Q = qr(times(R, False)).Q
    for _ in range(niter):
        Q = qr(times(Q, True)).Q
        Q = qr(times(Q, False)).Q
    return Q


def _check_matrix(name: str, A: Any) -> None:
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise ValueError(f"{name}: A must have at least 2 dimensions, got shape {tuple(A.shape)}")


def _svd_lowrank(A: Tensor, q: int, niter: int, M: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:
        A = _mH(A)
        M = M.mT if M is not None else None
    Q = _approximate_basis(A, q, niter, M)
    Bm = matmul(_mH(Q), A) if not A.is_sparse else _mH(matmul(_mH(A), Q))
    if M is not None:
        Bm = Bm - matmul(_mH(Q), M)
    U, S, Vh = svd(Bm, full_matrices=False)
    U = matmul(Q, U)
    V = Vh.mT
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(
    A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """An approximate truncated SVD ``(U, S, V)`` of ``A`` (or ``A - M``), ``A ≈ U diag(S) V^T``
    with ``q`` columns, by a randomised range finder with ``niter`` subspace iterations.
    Exact (up to signs) when ``rank(A) <= q``. ``A`` may be sparse (2-D)."""
    _check_matrix("svd_lowrank", A)
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(
    A: Tensor, q: int | None = None, center: bool = True, niter: int = 2
) -> tuple[Tensor, Tensor, Tensor]:
    """Principal components of the rows of ``A``: ``svd_lowrank`` of ``A`` minus its column
    means (with ``center``). ``q`` defaults to ``min(6, m, n)``. Returns ``(U, S, V)``; the
    principal directions are the columns of ``V``."""
    _check_matrix("pca_lowrank", A)
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (isinstance(q, int) and 0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    if A.is_sparse:
        if A.ndim != 2:
            raise ValueError("pca_lowrank input is expected to be 2-dimensional tensor")
        ones = Tensor._make(np.ones((m, 1), dtype=to_numpy(_float_dtype(A))))
        C = matmul(_mH(A), ones).mT / m  # column means, (1, n)
        return _svd_lowrank(A, q, niter, C.expand(m, n))
    return _svd_lowrank(A - A.mean(dim=-2, keepdim=True), q, niter, None)


# ---------------------------------------------------------------------------- lobpcg


def _block_products(T: Tensor, m: int) -> list:
    """``Y -> T_i @ Y`` on NumPy blocks for each matrix ``T_i`` of the batch; a sparse (2-D)
    ``T`` goes through the sparse product, never densified."""
    if T.is_sparse:
        return [lambda Y: matmul(T, Tensor._make(Y))._data]
    return [lambda Y, t=t: t @ Y for t in T._data.reshape((-1, m, m))]


class _Lobpcg(Function):
    """The ``k`` extreme eigenpairs of symmetric ``A`` (optionally w.r.t. ``B``), batched; the
    gradient w.r.t. ``A`` is the restricted eigen-decomposition's (module docstring)."""

    _raw = True

    @staticmethod
    def forward(ctx, A, B, X, k, niter, tol, largest, method, operators):
        # A (dense, for the gradient) and B are tensor arguments; the products with A, B and
        # the preconditioner come ready in ``operators`` (sparse tensors never reach apply)
        amuls, bmuls, kmul, batch = operators
        m = X.shape[-2]
        a = A._data if A is not None else None
        count = len(amuls)
        E = np.empty((count, k), dtype=X.dtype)
        V = np.empty((count, m, k), dtype=X.dtype)
        for i in range(count):
            E[i], V[i], _ = lobpcg_np(amuls[i], bmuls[i], kmul, X[i], k, niter, tol, largest, method)
        E = E.reshape(batch + (k,))
        V = V.reshape(batch + (m, k))
        ctx.a, ctx.e, ctx.v, ctx.has_b, ctx.inputs = a, E, V, B is not None, (A, B)
        return E, V

    @staticmethod
    def backward(ctx, gE, gV):
        grads = fused_backward("lobpcg", lambda ge, gv: _lobpcg_backward(ctx, ge, gv), (gE, gV), ctx.inputs)
        return grads[0], None, None, None, None, None, None, None, None


def _lobpcg_backward(ctx: _Lobpcg, ge: np.ndarray | None, gv: np.ndarray | None) -> tuple:
    """Gradient w.r.t. ``A`` of the restricted eigen-decomposition (module docstring)."""
    if ctx.has_b or ctx.a is None:
        raise NotImplementedError(
            "lobpcg: the derivative is implemented for a dense A without B (the standard problem) only"
        )
    a, e, v = ctx.a, ctx.e, ctx.v
    m = a.shape[-1]
    grad = np.zeros_like(a)
    if ge is not None:
        grad = grad + (v * ge[..., None, :]) @ np.swapaxes(v, -1, -2)
    if gv is not None:
        # u_i = (lambda_i I - A + x_i x_i^T)^{-1} (I - x_i x_i^T) g_i : the pseudo-inverse on x_i's complement
        vi = np.moveaxis(v, -1, -2)[..., None]  # (..., k, m, 1)
        gi = np.moveaxis(gv, -1, -2)[..., None]
        shifted = (
            e[..., None, None] * np.eye(m, dtype=a.dtype) - a[..., None, :, :] + vi @ np.swapaxes(vi, -1, -2)
        )
        rhs = gi - vi @ (np.swapaxes(vi, -1, -2) @ gi)
        u = np.linalg.solve(shifted, rhs)[..., 0]  # (..., k, m)
        grad = grad + np.swapaxes(u, -1, -2) @ np.swapaxes(v, -1, -2)
    return (grad,)


def lobpcg(
    A: Tensor,
    k: int | None = None,
    B: Tensor | None = None,
    X: Tensor | None = None,
    n: int | None = None,
    iK: Tensor | None = None,
    niter: int | None = None,
    tol: float | None = None,
    largest: bool | None = None,
    method: str | None = None,
    tracker: Any = None,
    ortho_iparams: dict | None = None,
    ortho_fparams: dict | None = None,
    ortho_bparams: dict | None = None,
) -> tuple[Tensor, Tensor]:
    """The ``k`` largest (``largest=False``: smallest) eigenpairs ``(E, X)`` of the symmetric
    positive definite generalised problem ``A X = B X diag(E)`` by LOBPCG.

    Args:
        A: ``(*, m, m)`` symmetric matrix (dense or sparse).
        k: number of eigenpairs (default: ``X.shape[-1]``, or 1).
        B: ``(*, m, m)`` symmetric positive definite matrix (default: identity).
        X: ``(*, m, n)`` initial block (default: random, ``n`` columns).
        n: block size when ``X`` is not given (default: ``k``); ``m`` must be at least ``3 n``.
        iK: ``(m, m)`` preconditioner applied to the residuals.
        niter: maximum number of iterations (default 1000; ``-1``: until converged).
        tol: residual tolerance (default: square root of the dtype's epsilon).
        method: ``"ortho"`` (default) or ``"basic"`` (see ``kernels/lobpcg.py``).
        tracker, ortho_iparams, ortho_fparams, ortho_bparams: accepted for compatibility; the
            iteration is not exposed to a tracker and the orthogonalisation has no tunables.

    Returns ``E`` (``(*, k)``, in the order of the selection: descending for ``largest``) and
    ``X`` (``(*, m, k)``, ``B``-orthonormal columns). Differentiable w.r.t. ``A`` when ``B`` is
    not given."""
    if not isinstance(A, Tensor):
        raise TypeError(f"lobpcg(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2 or A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and B.shape != A.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    method = "ortho" if method is None else method
    if method not in ("ortho", "basic"):
        raise ValueError(f"lobpcg: method must be 'ortho' or 'basic', got {method!r}")
    dtype = _float_dtype(A)
    np_dtype = np.dtype(to_numpy(dtype))
    if tol is None:
        tol = float(np.finfo(np_dtype).eps) ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(
            f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than 3 x the "
            f"number of requested eigenpairs (={n})"
        )
    if k > n:
        raise ValueError(f"lobpcg: k (={k}) must not exceed the block size n (={n})")
    batch = tuple(A.shape[:-2])
    count = int(np.prod(batch)) if batch else 1
    if X is None:
        x0 = _random.randn(count, m, n, dtype=dtype)._data
    else:
        if tuple(X.shape[-2:]) != (m, n):
            raise AssertionError(f"X shape mismatch: got {tuple(X.shape[-2:])}, expected {(m, n)}")
        x0 = np.broadcast_to(X.detach()._data, batch + (m, n)).reshape((count, m, n))
    x0 = x0.astype(np_dtype)
    niter = 1000 if niter is None else niter
    A_sym = (A + A.mT) / 2 if A.requires_grad and not A.is_sparse else A
    B_sym = (B + B.mT) / 2 if B is not None and B.requires_grad and not B.is_sparse else B
    amuls = _block_products(A_sym, m)
    bmuls = _block_products(B_sym, m) if B is not None else [None] * count
    kmul = _block_products(iK, m)[0] if iK is not None else None
    E, V = _Lobpcg.apply(
        None if A.is_sparse else A_sym,
        None if B is None or B.is_sparse else B_sym,
        x0,
        k,
        niter,
        float(tol),
        True if largest is None else largest,
        method,
        (amuls, bmuls, kmul, batch),
    )
    return E, V
