"""Shape ops: view/reshape, expand, transpose/permute, and ``sum_to`` (the one helper that
sums a broadcast gradient back to an input's shape). Views share memory and the version
counter of their input, as in PyTorch."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import wrap_dim

TENSOR_METHODS = ("_sum_to", "view", "reshape", "expand", "expand_as", "transpose", "permute", "t",
                  "view_as", "reshape_as", "squeeze", "unsqueeze")


def _shape_arg(shape: tuple) -> tuple:
    """Accept ``f(2, 3)`` and ``f((2, 3))`` alike."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _infer_shape(shape: tuple, numel: int) -> tuple:
    """Resolve one ``-1`` entry; raise PyTorch's error when the sizes do not fit."""
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


class Reshape(Function):
    _raw = True
    _view = True

    @staticmethod
    def forward(ctx, a, shape):
        x = a._data
        ctx.in_shape = x.shape
        return x.reshape(_infer_shape(shape, x.size))

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.in_shape), None


class View(Reshape):
    @staticmethod
    def forward(ctx, a, shape):
        x = a._data
        ctx.in_shape = x.shape
        new = _infer_shape(shape, x.size)
        out = x.view()
        try:
            out.shape = new  # raises instead of copying when a view is impossible
        except AttributeError:
            raise RuntimeError("view size is not compatible with input tensor's size and stride "
                               "(at least one dimension spans across two contiguous subspaces). "
                               "Use .reshape(...) instead.") from None
        return out


class Expand(Function):
    _raw = True
    _view = True

    @staticmethod
    def forward(ctx, a, shape):
        x = a._data
        ctx.in_shape = x.shape
        if len(shape) < x.ndim:
            raise RuntimeError(f"expand(torch.FloatTensor{{{list(x.shape)}}}, size={list(shape)}): "
                               "the number of sizes provided must be greater or equal to the "
                               "number of dimensions in the tensor")
        lead = len(shape) - x.ndim
        full = tuple(x.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
        for i in range(x.ndim):
            if x.shape[i] != 1 and x.shape[i] != full[i + lead]:
                raise RuntimeError(f"The expanded size of the tensor ({full[i + lead]}) must match "
                                   f"the existing size ({x.shape[i]}) at non-singleton dimension "
                                   f"{i + lead}.  Target sizes: {list(shape)}.  Tensor sizes: "
                                   f"{list(x.shape)}")
        return np.broadcast_to(x, full)

    @staticmethod
    def backward(ctx, g):
        return sum_to(g, ctx.in_shape), None


class Permute(Function):
    _raw = True
    _view = True

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return a._data.transpose(dims)

    @staticmethod
    def backward(ctx, g):
        return g.permute(tuple(np.argsort(ctx.dims))), None


def sum_to(g: Tensor, shape: tuple) -> Tensor:
    """Sum ``g`` over the dims that broadcasting added or stretched, giving ``shape``."""
    if g._data.shape == tuple(shape):
        return g
    lead = g._data.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                      if s == 1 and g._data.shape[i + lead] != 1)
    out = g.sum(dims, keepdim=True) if dims else g
    return out.reshape(tuple(shape)) if lead or out._data.shape != tuple(shape) else out


_sum_to = sum_to


def reshape(input: Tensor, *shape: Any) -> Tensor:
    """Same data in a new shape (a view when possible, else a copy); one dim may be -1."""
    return Reshape.apply(input, _shape_arg(shape))


def view(input: Tensor, *shape: Any) -> Tensor:
    """A view with a new shape; raises when the strides do not allow one (use reshape)."""
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int, np.integer)):
        from .elementwise import cast
        return cast(input, shape[0])
    return View.apply(input, _shape_arg(shape))


def view_as(input: Tensor, other: Tensor) -> Tensor:
    return view(input, other._data.shape)


def reshape_as(input: Tensor, other: Tensor) -> Tensor:
    return reshape(input, other._data.shape)


def expand(input: Tensor, *sizes: Any) -> Tensor:
    """A broadcast view to ``sizes`` (-1 keeps a dim); no memory is copied."""
    return Expand.apply(input, _shape_arg(sizes))


def expand_as(input: Tensor, other: Tensor) -> Tensor:
    return Expand.apply(input, other._data.shape)


def permute(input: Tensor, *dims: Any) -> Tensor:
    """A view with dims reordered."""
    dims = _shape_arg(dims)
    nd = input._data.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not "
                           f"match the length of the desired ordering of dimensions i.e. input.dim() "
                           f"= {nd} is not equal to len(dims) = {len(dims)}")
    dims = tuple(wrap_dim(d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return Permute.apply(input, dims)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """A view with ``dim0`` and ``dim1`` swapped."""
    nd = input._data.ndim
    if nd == 0:
        return input
    order = list(range(nd))
    d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    order[d0], order[d1] = order[d1], order[d0]
    return Permute.apply(input, tuple(order))


def t(input: Tensor) -> Tensor:
    """Transpose of a tensor with at most 2 dims."""
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input._data.ndim}D")
    return transpose(input, 0, 1) if input._data.ndim == 2 else input


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """A view with a size-1 dim inserted at ``dim``."""
    nd = input._data.ndim + 1
    d = wrap_dim(dim, nd)
    shape = input._data.shape[:d] + (1,) + input._data.shape[d:]
    return Reshape.apply(input, shape)


def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """A view without size-1 dims (all of them, or those in ``dim``)."""
    shape = input._data.shape
    if dim is None:
        dims = {i for i, s in enumerate(shape) if s == 1}
    else:
        ds = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
        dims = {wrap_dim(int(d), len(shape)) for d in ds if shape and shape[wrap_dim(int(d), len(shape))] == 1}
    if not dims:
        return input if dim is None or not shape else Reshape.apply(input, shape)
    return Reshape.apply(input, tuple(s for i, s in enumerate(shape) if i not in dims))
