"""``torch.sparse.softmax`` and ``torch.sparse.log_softmax`` of a sparse COO tensor.

The softmax runs over the *specified* elements only: an unspecified element counts as
``-inf`` (it gets no probability and stays unspecified), so the result has the input's
(coalesced) indices. Along a sparse dimension, the elements that share every other sparse
index form one group; max and sum per group are ``np.maximum.at``/``np.add.at`` over the
group numbers. Along a dense dimension it is the dense softmax of the values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap_dim
from ..autograd.function import Function
from ..autograd.grad_mode import recording
from .softmax import LogSoftmax, Softmax
from .sparse import SparseTensor, _segment_sum
from .sparse_base import SparseBase

__all__ = ["log_softmax", "softmax"]


def _group_stats(v: np.ndarray, groups: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``v - max`` per group and the sum of its exponentials per group."""
    mx = np.full((n,) + v.shape[1:], -np.inf, dtype=v.dtype)
    np.maximum.at(mx, groups, v)
    shifted = v - mx[groups]
    s = np.zeros_like(mx)
    np.add.at(s, groups, np.exp(shifted))
    return shifted, s


class GroupSoftmax(Function):
    """Softmax of ``values`` within groups of rows (``groups[k]`` is row ``k``'s group);
    backward ``y * (g - groupsum(g * y))``."""

    _raw = True

    @staticmethod
    def forward(ctx, values, groups, n):
        shifted, s = _group_stats(values._data, groups, n)
        y = np.exp(shifted) / s[groups]
        ctx.save_for_backward(values)
        ctx.out, ctx.groups, ctx.n = y, groups, n
        return y

    @staticmethod
    def backward(ctx, g):
        y = _saved_softmax(ctx)
        return y * (g - _segment_sum(g * y, ctx.groups, ctx.n)[ctx.groups]), None, None


class GroupLogSoftmax(Function):
    """Log-softmax of ``values`` within groups of rows; backward
    ``g - softmax * groupsum(g)``."""

    _raw = True

    @staticmethod
    def forward(ctx, values, groups, n):
        shifted, s = _group_stats(values._data, groups, n)
        out = shifted - np.log(s)[groups]
        ctx.save_for_backward(values)
        ctx.out, ctx.groups, ctx.n = np.exp(out), groups, n
        return out

    @staticmethod
    def backward(ctx, g):
        y = _saved_softmax(ctx)
        return g - y * _segment_sum(g, ctx.groups, ctx.n)[ctx.groups], None, None


def _saved_softmax(ctx: Any) -> Tensor:
    """The group softmax of the saved values: kept from forward, or recomputed in the graph
    when the backward pass is itself recorded (double backward)."""
    if recording():
        (values,) = ctx._checked_saved()
        return GroupSoftmax.apply(values, ctx.groups, ctx.n)
    return Tensor._make(ctx.out)


def _sparse_softmax(name: str, input: Tensor, dim: int, dtype: Any, log: bool) -> SparseTensor:
    if not isinstance(input, SparseTensor):
        kind = "a compressed layout" if isinstance(input, SparseBase) else "Strided (dense)"
        raise NotImplementedError(
            f"sparse.{name}: expected a sparse COO tensor, got {kind}; convert with .to_sparse() "
            f"(or use disttorch.{name} for a dense tensor)"
        )
    s = input.coalesce()
    vals = s._sp_values if dtype is None else s._sp_values.to(dtype)
    if not vals.is_floating_point():
        raise NotImplementedError(f"\"{name}\" not implemented for '{vals.dtype.scalar_name}'")
    d = _wrap_dim(dim, s.dim())
    sd = s.sparse_dim()
    if d >= sd:
        out = (LogSoftmax if log else Softmax).apply(vals, d - sd + 1)
    elif s._nnz() == 0:
        out = vals * 1
    else:
        others = [k for k in range(sd) if k != d]
        if others:
            key = np.ravel_multi_index(tuple(s._sp_indices[others]), tuple(s._sp_shape[k] for k in others))
            uniq, groups = np.unique(key, return_inverse=True)
            n = uniq.size
        else:
            groups, n = np.zeros(s._nnz(), dtype=np.int64), 1
        out = (GroupLogSoftmax if log else GroupSoftmax).apply(vals, groups.reshape(-1), n)
    return SparseTensor._build(s._sp_indices, out, s._sp_shape, True)


def softmax(input: Tensor, dim: int, *, dtype: _dtype.dtype | None = None) -> SparseTensor:
    """Softmax of a sparse COO tensor along ``dim`` over its specified elements (unspecified
    ones count as ``-inf``); the result has ``input``'s indices. ``dtype`` casts the values
    first. Differentiable with respect to the values."""
    return _sparse_softmax("softmax", input, dim, dtype, False)


def log_softmax(input: Tensor, dim: int, *, dtype: _dtype.dtype | None = None) -> SparseTensor:
    """Log-softmax of a sparse COO tensor along ``dim`` over its specified elements (see
    :func:`softmax`)."""
    return _sparse_softmax("log_softmax", input, dim, dtype, True)
