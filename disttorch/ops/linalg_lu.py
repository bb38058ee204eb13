"""The LU factorisation as a Function: ``linalg.lu_factor``'s packed ``LU`` (and the ``lu``,
``lu_unpack`` and ``lu_solve`` built on it) differentiable in ``A``, with PyTorch's backward
(``linalg_lu_backward`` in ``FunctionsManual.cpp``) for square, wide and tall matrices.

With ``A = P L U`` (``L`` unit lower ``m x k``, ``U`` upper ``k x n``, ``k = min(m, n)``) and
the gradients ``gL``, ``gU`` of the two factors packed in ``LU``:

- square and wide (``m <= n``, ``U = [U1 U2]``):
  ``gA = P L^{-H} [(tril(L^H gL - gU2 U2^H, -1) + triu(gU1 U1^H)) U1^{-H}, gU2]``;
- tall (``m > n``, ``L = [L1; L2]``):
  ``gA = P [L1^{-H} (tril(L1^H gL1, -1) + triu(gU U^H - L2^H gL2)); gL2] U^{-H}``.

The backward is written in tensor ops (triangular solves and products); with
``create_graph`` it recomputes the factors in the graph, so a second derivative goes through
them as far as the triangular solves allow.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import recording
from ..kernels.lu import lu_factor_np, unpack_np
from .linalg import matmul
from .linalg_decomp import SolveTriangular
from .shape import cat


class LuFactor(Function):
    """``(LU, pivots)`` of ``A`` (LAPACK's packed factors, 1-based int32 pivots); the
    gradient reaches ``A`` through ``LU`` (its strictly lower part is ``L``'s, the rest
    ``U``'s)."""

    _raw = True
    _node_name, _profiled_as = "LinalgLuFactorExBackward0", "aten::linalg_lu_factor_ex"

    @staticmethod
    def forward(ctx, a):
        lu, piv = lu_factor_np(a._data)
        ctx.lu, ctx.piv, ctx.a = lu, piv, a
        ctx.mark_non_differentiable(piv)
        return lu, piv

    @staticmethod
    def backward(ctx, glu, gpiv):
        if recording():  # create_graph: the factors as functions of A, for a second derivative
            p, low, up = lu_unpacked(*LuFactor.apply(ctx.a))
        else:
            p, low, up = (Tensor._make(x) for x in unpack_np(ctx.lu, ctx.piv))
        m, n = ctx.lu.shape[-2:]
        k = min(m, n)
        g = glu if isinstance(glu, Tensor) else Tensor._make(glu)
        gl, gu = g[..., :, :k].tril(-1), g[..., :k, :].triu()
        if m <= n:
            u1, u2, gu1, gu2 = up[..., :k], up[..., k:], gu[..., :k], gu[..., k:]
            inner = (matmul(low.mH, gl) - matmul(gu2, u2.mH)).tril(-1) + matmul(gu1, u1.mH).triu()
            right = SolveTriangular.apply(u1.mH, inner, False, False, False)  # inner U1^{-H}
            ga = SolveTriangular.apply(low.mH, cat([right, gu2], -1), True, True, True)
        else:
            l1, l2, gl1, gl2 = low[..., :k, :], low[..., k:, :], gl[..., :k, :], gl[..., k:, :]
            inner = matmul(l1.mH, gl1).tril(-1) + (matmul(gu, up.mH) - matmul(l2.mH, gl2)).triu()
            left = SolveTriangular.apply(l1.mH, inner, True, True, True)  # L1^{-H} inner
            ga = SolveTriangular.apply(up.mH, cat([left, gl2], -2), False, False, False)
        return matmul(p, ga)


def lu_factor_parts(A: Tensor) -> tuple:
    """``(LU, pivots)`` of ``A``, recorded for autograd."""
    return LuFactor.apply(A)


def lu_unpacked(LU: Tensor, pivots: Tensor) -> tuple:
    """``(P, L, U)`` from a packed factorisation, ``L`` and ``U`` differentiable in ``LU``."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    p, _, _ = unpack_np(LU._data, pivots._data)
    eye = Tensor._make(np.eye(m, k, dtype=LU._data.dtype))
    return Tensor._make(p), LU[..., :, :k].tril(-1) + eye, LU[..., :k, :].triu()


def lu_solve_parts(LU: Tensor, pivots: Tensor, B: Tensor, left: bool, adjoint: bool) -> Tensor:
    """``X`` with ``A X = B`` (``left``) or ``X A = B``, ``A = P L U`` (``A^H`` for ``adjoint``),
    by two triangular solves: differentiable in ``LU`` and ``B``."""
    p, low, up = lu_unpacked(LU, pivots)
    tri = SolveTriangular.apply
    if left and not adjoint:  # U^{-1} L^{-1} P^T B
        return tri(up, tri(low, matmul(p.mT, B), False, True, True), True, True, False)
    if left:  # P L^{-H} U^{-H} B
        return matmul(p, tri(low.mH, tri(up.mH, B, False, True, False), True, True, True))
    if not adjoint:  # B U^{-1} L^{-1} P^T
        return matmul(tri(low, tri(up, B, True, False, False), False, False, True), p.mT)
    return tri(up.mH, tri(low.mH, matmul(B, p), True, False, True), False, False, False)  # B P L^{-H} U^{-H}
