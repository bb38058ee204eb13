"""``cholesky`` and ``solve_triangular`` with backward (batched), as the distributions need
them (``torch.linalg.cholesky``/``torch.linalg.solve_triangular`` semantics)."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Function

__all__ = ["cholesky", "solve_triangular"]


def _mT(t: Tensor) -> Tensor:
    return t.transpose(-2, -1)


class Cholesky(Function):
    """``L`` with ``A = L L^T``; backward ``sym(L^-T Phi(L^T gL) L^-1)`` (``Phi``: lower
    triangle with the diagonal halved)."""

    _raw = True

    @staticmethod
    def forward(ctx, a, upper):
        x = a._data
        if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
            raise RuntimeError(
                f"linalg.cholesky: A must be batches of square matrices, but they are "
                f"{x.shape[-2] if x.ndim > 1 else 1} by {x.shape[-1]} matrices"
            )
        try:
            low = np.linalg.cholesky(x)
        except np.linalg.LinAlgError:
            raise RuntimeError(
                "linalg.cholesky: The factorization could not be completed because the "
                "input is not positive-definite."
            ) from None
        ctx.upper = upper
        if ctx.needs_input_grad:
            ctx.low = low
        return np.swapaxes(low, -1, -2).copy() if upper else low

    @staticmethod
    def backward(ctx, g):
        low = Tensor._make(ctx.low)
        if ctx.upper:
            g = _mT(g)
        phi = _mT(low) @ g.tril()
        phi = phi.tril() - 0.5 * phi.diagonal(dim1=-2, dim2=-1).unsqueeze(-1) * _eye_like(phi)
        inner = solve_triangular(_mT(low), phi, upper=True)  # L^-T Phi
        ga = _mT(solve_triangular(_mT(low), _mT(inner), upper=True))  # (L^-T (L^-T Phi)^T)^T = L^-T Phi L^-1
        return 0.5 * (ga + _mT(ga)), None


def _eye_like(t: Tensor) -> Tensor:
    return Tensor._make(np.eye(t.shape[-1], dtype=t._data.dtype))


class SolveTriangular(Function):
    """``X = A^-1 B`` for triangular ``A`` (only its ``upper``/lower triangle is read)."""

    _raw = True

    @staticmethod
    def forward(ctx, a, b, upper, unitriangular):
        tri = np.triu(a._data) if upper else np.tril(a._data)
        if unitriangular:
            n = tri.shape[-1]
            tri = tri.copy()
            tri[..., np.arange(n), np.arange(n)] = 1
        shape = np.broadcast_shapes(tri.shape[:-2], b._data.shape[:-2])
        x = np.linalg.solve(
            np.broadcast_to(tri, shape + tri.shape[-2:]), np.broadcast_to(b._data, shape + b._data.shape[-2:])
        )
        ctx.upper, ctx.unitriangular = upper, unitriangular
        if ctx.needs_input_grad:
            ctx.save_for_backward(a)
            ctx.x = x
        return x

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        gb = solve_triangular(_mT(a), g, upper=not ctx.upper, unitriangular=ctx.unitriangular)
        ga = None
        if ctx.needs_input_grad[0]:
            ga = -(gb @ _mT(Tensor._make(ctx.x)))
            ga = (
                ga.triu(1 if ctx.unitriangular else 0)
                if ctx.upper
                else ga.tril(-1 if ctx.unitriangular else 0)
            )
        return ga, gb, None, None


def cholesky(input: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor of symmetric positive-definite matrices (lower, or upper)."""
    return Cholesky.apply(input, upper)


def solve_triangular(
    A: Tensor,
    B: Tensor,
    *,
    upper: bool,
    left: bool = True,
    unitriangular: bool = False,
) -> Tensor:
    """``X`` with ``A X = B`` (``left``) or ``X A = B``, ``A`` triangular."""
    if not left:
        return _mT(SolveTriangular.apply(_mT(A), _mT(B), not upper, unitriangular))
    return SolveTriangular.apply(A, B, upper, unitriangular)
