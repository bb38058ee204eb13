"""``normalize``: divide vectors along a dim by their p-norm (at least ``eps``)."""

from __future__ import annotations

import numpy as np

from ..._tensor import Tensor, _wrap_dim
from ...autograd.function import Function, named_node
from ...autograd.grad_mode import recording
from ...kernels.reductions import reduce_along
from ...kernels.threads import elementwise

__all__ = ["normalize"]


class Normalize(Function):
    """``y = x / max(||x||_p, eps)`` along ``dim``. Where the norm exceeds ``eps``,
    ``dx = g / n - sum(g * x) * dn/dx / n^2`` with ``dn/dx = sign(x) |x|^(p-1) n^(1-p)``;
    elsewhere ``dx = g / eps``. Under ``create_graph`` the same formula in tensor ops, so that
    it is differentiable again."""

    _raw = True

    @staticmethod
    def forward(ctx, x, p, dim, eps):
        a = x._data

        def norm(v: np.ndarray) -> np.ndarray:
            if p != 2:
                return np.linalg.norm(v, ord=p, axis=dim, keepdims=True)
            return np.sqrt((v * v).sum(axis=dim, keepdims=True))

        n = reduce_along(norm, a, (dim,), a.dtype, work=2 * a.size).astype(a.dtype, copy=False)
        denom = np.maximum(n, a.dtype.type(eps))
        ctx.save_for_backward(x)
        ctx.n, ctx.denom, ctx.p, ctx.dim, ctx.eps = n, denom, p, dim, eps
        return elementwise(np.true_divide, a, denom)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx._checked_saved()
        if recording():  # create_graph: the same derivative in tensor ops, differentiable in x
            return _backward_in_graph(ctx, g, x), None, None, None
        a, n, p = x._data, ctx.n, ctx.p
        above = n > ctx.eps

        def coef_of(v: np.ndarray, norm: np.ndarray, big: np.ndarray) -> np.ndarray:
            dn = np.sign(v) * np.abs(v) ** (p - 1) * norm ** (1 - p)
            return np.where(big, dn / (norm * norm), 0).astype(v.dtype, copy=False)

        with np.errstate(divide="ignore", invalid="ignore"):
            coef = elementwise(coef_of, a, n, above)
        gx = g / Tensor._make(ctx.denom)
        return gx - (g * x).sum(ctx.dim, keepdim=True) * Tensor._make(coef), None, None, None


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``."""
    if out is not None:
        raise NotImplementedError("normalize: the out= argument is not supported")
    if input.is_complex():  # PyTorch's composite form: the norm of the magnitudes
        return input / input.norm(p, dim, keepdim=True).clamp_min(eps)
    return named_node(Normalize.apply(input, float(p), _wrap_dim(dim, input._data.ndim), eps), "DivBackward0")


def _backward_in_graph(ctx, g: Tensor, x: Tensor) -> Tensor:
    """``Normalize``'s input gradient with the norm recomputed from ``x`` in the graph (a
    gradient penalty or Hessian through ``normalize`` differentiates it again)."""
    p, dim = ctx.p, ctx.dim
    n = x.norm(p, dim, keepdim=True)
    above = Tensor._make(ctx.n > ctx.eps)
    safe = n.where(above, 1.0)
    dn = x.sign() * x.abs() ** (p - 1) * safe ** (1 - p)
    coef = (dn / (safe * safe)).where(above, 0.0)
    return g / n.clamp_min(ctx.eps) - (g * x).sum(dim, keepdim=True) * coef
