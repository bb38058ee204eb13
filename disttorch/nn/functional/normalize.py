"""``normalize``: divide vectors along a dim by their p-norm (at least ``eps``)."""

from __future__ import annotations

import numpy as np

from ..._tensor import Tensor, _wrap_dim
from ...autograd.function import Function

__all__ = ["normalize"]


class Normalize(Function):
    """``y = x / max(||x||_p, eps)`` along ``dim``. Where the norm exceeds ``eps``,
    ``dx = g / n - sum(g * x) * dn/dx / n^2`` with ``dn/dx = sign(x) |x|^(p-1) n^(1-p)``;
    elsewhere ``dx = g / eps``."""

    _raw = True

    @staticmethod
    def forward(ctx, x, p, dim, eps):
        a = x._data
        n = (
            np.linalg.norm(a, ord=p, axis=dim, keepdims=True)
            if p != 2
            else np.sqrt((a * a).sum(axis=dim, keepdims=True))
        )
        n = n.astype(a.dtype, copy=False)
        denom = np.maximum(n, a.dtype.type(eps))
        ctx.save_for_backward(x)
        ctx.n, ctx.denom, ctx.p, ctx.dim, ctx.eps = n, denom, p, dim, eps
        return a / denom

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        a, n, p = x._data, ctx.n, ctx.p
        above = n > ctx.eps
        with np.errstate(divide="ignore", invalid="ignore"):
            dn = np.sign(a) * np.abs(a) ** (p - 1) * n ** (1 - p)
            coef = np.where(above, dn / (n * n), 0).astype(a.dtype, copy=False)
        gx = g / Tensor._make(ctx.denom)
        return gx - (g * x).sum(ctx.dim, keepdim=True) * Tensor._make(coef), None, None, None


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``."""
    if out is not None:
        raise NotImplementedError("normalize: the out= argument is not supported")
    return Normalize.apply(input, float(p), _wrap_dim(dim, input._data.ndim), eps)
