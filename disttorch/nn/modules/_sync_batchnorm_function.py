"""The computation of ``SyncBatchNorm``: batch statistics over every rank's batch.

Forward, for input ``x`` of shape (N, C, *) on each rank:

1. each rank sums ``x`` and ``x*x`` per channel and counts its elements;
2. one all-reduce of ``[sum, sum of squares, count]`` gives the global mean and
   (biased) variance, exactly as if the ranks' batches were one batch;
3. ``y = (x - mean) / sqrt(var + eps) * weight + bias``.

Backward needs the global means of ``dy`` and ``dy * (x - mean)`` (one more all-reduce);
the weight and bias gradients stay local, because DDP averages parameter gradients.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor
from ...autograd.function import Function

__all__ = ["SyncBatchNormFunction"]


def _all_reduce_sum(arr: np.ndarray, group: Any) -> np.ndarray:
    from ... import distributed as dist
    t = Tensor._make(arr)
    dist.all_reduce(t, group=group)
    return t._data


class SyncBatchNormFunction(Function):
    _raw = True

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, eps, momentum, group):
        a = x._data
        axes = (0,) + tuple(range(2, a.ndim))
        shape = (1, -1) + (1,) * (a.ndim - 2)
        count = a.size // a.shape[1]
        stats = np.concatenate([a.sum(axis=axes, dtype=np.float64),
                                np.square(a, dtype=np.float64).sum(axis=axes), [count]])
        stats = _all_reduce_sum(stats, group)
        c = a.shape[1]
        total = stats[-1]
        mean = stats[:c] / total
        var = np.maximum(stats[c:2 * c] / total - mean * mean, 0.0)
        invstd = 1.0 / np.sqrt(var + eps)
        if running_mean is not None:
            unbiased = var * total / max(total - 1, 1)
            running_mean._data *= 1 - momentum
            running_mean._data += momentum * mean.astype(a.dtype)
            running_var._data *= 1 - momentum
            running_var._data += momentum * unbiased.astype(a.dtype)
            running_mean._bump_version()
            running_var._bump_version()
        xhat = (a - mean.astype(a.dtype).reshape(shape)) * invstd.astype(a.dtype).reshape(shape)
        ctx.xhat, ctx.invstd, ctx.total, ctx.axes, ctx.shape, ctx.group = xhat, invstd, total, axes, shape, group
        ctx.weight = weight._data if weight is not None else None
        out = xhat * weight._data.reshape(shape) if weight is not None else xhat.copy()
        if bias is not None:
            out += bias._data.reshape(shape)
        return out

    @staticmethod
    def backward(ctx, g):
        dy = g._data
        xhat, axes, shape = ctx.xhat, ctx.axes, ctx.shape
        sum_dy = dy.sum(axis=axes, dtype=np.float64)
        sum_dy_xhat = (dy * xhat).sum(axis=axes, dtype=np.float64)
        grad_w = Tensor._make(sum_dy_xhat.astype(dy.dtype)) if ctx.needs_input_grad[1] else None
        grad_b = Tensor._make(sum_dy.astype(dy.dtype)) if ctx.needs_input_grad[2] else None
        grad_x = None
        if ctx.needs_input_grad[0]:
            c = sum_dy.size
            both = _all_reduce_sum(np.concatenate([sum_dy, sum_dy_xhat]), ctx.group)
            mean_dy = (both[:c] / ctx.total).astype(dy.dtype).reshape(shape)
            mean_dy_xhat = (both[c:] / ctx.total).astype(dy.dtype).reshape(shape)
            scale = ctx.invstd.astype(dy.dtype).reshape(shape)
            if ctx.weight is not None:
                scale = scale * ctx.weight.reshape(shape)
            grad_x = Tensor._make((dy - mean_dy - xhat * mean_dy_xhat) * scale)
        return grad_x, grad_w, grad_b, None, None, None, None, None
