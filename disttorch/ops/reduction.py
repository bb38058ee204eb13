"""Reductions: sum, mean (more in this family: max, min, prod, var, std, logsumexp, norm...).

Backward of a reduction broadcasts the upstream gradient back over the reduced dims.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import dims_tuple, float_result

TENSOR_METHODS = ("sum", "mean")


def _expand_back(g: Tensor, shape: tuple, dims: tuple | None, keepdim: bool) -> Tensor:
    """Undo a reduction's shape change: reinsert reduced dims, then expand to ``shape``."""
    if dims is None:
        return g.reshape((1,) * len(shape)).expand(shape) if shape else g
    if not keepdim:
        kept = list(shape)
        for d in dims:
            kept[d] = 1
        g = g.reshape(tuple(kept))
    return g.expand(shape)


class Sum(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, dim, keepdim, dtype):
        x = a._data
        dims = dims_tuple(dim, x.ndim)
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        if dtype is not None:
            out_dt = dtype.numpy
        elif x.dtype.kind in "bi" or x.dtype.kind == "u":
            out_dt = np.int64
        else:
            out_dt = x.dtype
        return np.asarray(np.sum(x, axis=dims, keepdims=keepdim, dtype=out_dt))

    @staticmethod
    def backward(ctx, g):
        return _expand_back(g, ctx.shape, ctx.dims, ctx.keepdim), None, None, None


class Mean(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, dim, keepdim, dtype):
        x = a._data
        if x.dtype.kind not in "f" and dtype is None:
            raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either "
                               f"a floating point or complex dtype. Got: {a.dtype.name.capitalize()}")
        dims = dims_tuple(dim, x.ndim)
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        n = x.size if dims is None else int(np.prod([x.shape[d] for d in dims]))
        ctx.n = n
        out = np.asarray(np.mean(x, axis=dims, keepdims=keepdim,
                                 dtype=dtype.numpy if dtype is not None else None))
        return float_result(out) if out.dtype != x.dtype and dtype is None else out

    @staticmethod
    def backward(ctx, g):
        return _expand_back(g / ctx.n, ctx.shape, ctx.dims, ctx.keepdim), None, None, None


def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Sum of all elements, or over ``dim`` (int or tuple); integers sum to int64."""
    return Sum.apply(input, dim, keepdim, dtype)


def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Mean of all elements, or over ``dim``; floating inputs only (as PyTorch)."""
    return Mean.apply(input, dim, keepdim, dtype)
