"""Indexing: ``tensor[index]`` with ints, slices, None, Ellipsis, boolean masks and integer
tensors. The backward of a read scatters the gradient back into zeros, accumulating where
an index repeats (``np.add.at``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Function

TENSOR_METHODS = ("__getitem__",)


def _np_index(index: Any) -> Any:
    """Turn tensors inside an index into arrays; check integer index dtypes."""
    if isinstance(index, tuple):
        return tuple(_np_index(i) for i in index)
    if isinstance(index, Tensor):
        a = index._data
        if a.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return a
    if isinstance(index, list):
        return np.asarray(index)
    return index


def _is_basic(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or isinstance(i, (int, slice, np.integer)) for i in items)


class GetItem(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, index):
        x = a._data
        ctx.shape, ctx.dtype, ctx.index = x.shape, x.dtype, index
        try:
            return x[index]
        except IndexError as e:
            raise IndexError(str(e).replace("axis", "dimension")) from None

    @staticmethod
    def backward(ctx, g):
        return IndexBackward.apply(g, ctx.shape, ctx.index), None


class GetItemView(GetItem):
    _view = True


class IndexBackward(Function):
    """Scatter-add a gradient into a zero tensor of the indexed tensor's shape."""
    _raw = True

    @staticmethod
    def forward(ctx, g, shape, index):
        ctx.index = index
        out = np.zeros(shape, dtype=g._data.dtype)
        if _is_basic(index):
            out[index] = g._data
        else:
            np.add.at(out, index, g._data)
        return out

    @staticmethod
    def backward(ctx, gg):
        return GetItem.apply(gg, ctx.index), None, None


def getitem(input: Tensor, index: Any) -> Tensor:
    """``input[index]``: basic indexing gives a view, advanced indexing a copy."""
    idx = _np_index(index)
    if _is_basic(idx):
        return GetItemView.apply(input, idx)
    return GetItem.apply(input, idx)


__getitem__ = getitem
