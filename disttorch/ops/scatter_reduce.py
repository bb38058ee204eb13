"""Reducing scatters: ``scatter_reduce`` (``"sum", "prod", "mean", "amax", "amin"``) and
``index_reduce`` (``"prod", "mean", "amax", "amin"``), with ``include_self``; and ``scatter``
itself, whose ``reduce="add"|"multiply"`` are the reducing scatter's ``sum``/``prod``.

Both reductions are one Function, ``ScatterReduce``: ``index_reduce`` is ``scatter_reduce`` with its 1-D
index repeated across ``source``. The forward reduces ``src`` into flat positions of the
output (a weighted ``bincount`` for sums, NumPy's unbuffered ``ufunc.at`` otherwise);
positions no index names keep ``input``.

The backward follows PyTorch's formulas: ``mean`` divides by the count of values reduced;
``prod`` takes the product of the *other* values (exact when a zero takes part); ``amax``
and ``amin`` share the gradient evenly among all values equal to the result (ties split).
As in PyTorch, with ``include_self=False`` an excluded ``input`` value equal to the result
still counts as a tie and its share is dropped (the gradient there sums to less than one:
PyG's ``global_max_pool`` of ReLU outputs, whose maximum 0 ties with the zeros it starts
from, trains as in PyTorch only so).
The backward is linear in the incoming gradient and built from tensor ops on it, so
``create_graph=True`` differentiates it again with respect to that gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Function, named_node
from ._helpers import wrap_dim
from .indexing import (
    Gather,
    Scatter,
    ScatterAdd,
    _check_bounds,
    _check_gather_shapes,
    _corner,
    _flat_positions,
    _pad_corner,
    _scatter_checks,
    add_flat,
    as_vectors,
)

__all__ = ["scatter", "scatter_reduce", "index_reduce"]

TENSOR_METHODS = ("scatter", "scatter_reduce", "index_reduce")

_SCATTER_REDUCES = ("sum", "prod", "mean", "amax", "amin")
_INDEX_REDUCES = ("prod", "mean", "amax", "amin")
_ALIASES = {"max": "amax", "min": "amin"}  # PyTorch accepts these spellings too
_UFUNC = {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _identity(reduce: str, dt: np.dtype) -> Any:
    """The value an excluded ``input`` position starts from."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = np.inf if dt.kind == "f" else (True if dt.kind == "b" else np.iinfo(dt).max)
    low = -np.inf if dt.kind == "f" else (False if dt.kind == "b" else np.iinfo(dt).min)
    return low if reduce == "amax" else big


def _reduce_into(x: np.ndarray, pos: np.ndarray, vals: np.ndarray, reduce: str, include_self: bool) -> tuple:
    """``x`` with ``vals`` reduced into the flat positions ``pos``; also the count of values
    reduced at each position (``input`` included) for ``mean``."""
    out = x.copy()
    flat = out.reshape(-1)
    if not include_self:
        flat[pos] = _identity(reduce, x.dtype)
    if reduce in ("sum", "mean"):
        add_flat(out, pos, vals)  # a weighted bincount for floats: much faster than np.add.at
    else:
        _UFUNC[reduce].at(flat, pos, vals)
    count = None
    if reduce == "mean":
        count = np.bincount(pos, minlength=flat.size).reshape(x.shape) + (1 if include_self else 0)
        hit = count > 0
        if x.dtype.kind == "f":
            np.divide(out, count, out=out, where=hit)
        else:
            np.floor_divide(out, count, out=out, where=hit, casting="unsafe")  # (uint8 too)
    return out, count


class ScatterReduce(Function):
    """``input`` with ``src`` reduced in at the positions ``index`` names along ``dim``."""

    _raw = True

    @staticmethod
    def forward(ctx, a, dim, index, src, reduce, include_self):
        x, idx, s = a._data, index._data, src._data
        pos = _flat_positions(idx, dim, x.shape).reshape(-1)
        vals = s[_corner(idx.shape)].reshape(-1)
        out, count = _reduce_into(x, pos, vals, reduce, include_self)
        ctx.x, ctx.vals, ctx.out, ctx.pos, ctx.count = x, vals, out, pos, count
        ctx.dim, ctx.index, ctx.src_shape = dim, index, s.shape
        ctx.reduce, ctx.include_self = reduce, include_self
        return out

    @staticmethod
    def backward(ctx, g):
        x, pos = ctx.x, ctx.pos
        shape = ctx.index._data.shape
        scattered = np.zeros(x.size, dtype=bool)
        scattered[pos] = True
        scattered = scattered.reshape(x.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            self_w, out_w, src_w, extra = _weights(ctx, scattered)
        if not ctx.include_self:
            self_w = np.where(scattered, 0, self_w)
        gi = gs = None
        if ctx.needs_input_grad[0]:
            gi = g * Tensor._make(self_w.astype(g._data.dtype, copy=False))
        if ctx.needs_input_grad[3]:
            gs = _gather(g, out_w, ctx) * Tensor._make(src_w.reshape(shape).astype(g._data.dtype, copy=False))
            if extra is not None:  # prod: the one zero of a position gets the product of the rest
                rest_out, only_zero = extra
                gs = gs + _gather(g, rest_out, ctx) * Tensor._make(
                    only_zero.reshape(shape).astype(g._data.dtype)
                )
            gs = _pad_corner(gs, ctx.src_shape)
        return gi, None, None, gs, None, None


def _gather(g: Tensor, weight: np.ndarray | None, ctx: Any) -> Tensor:
    """``(g * weight)`` read at the positions of the scattered values."""
    gw = g if weight is None else g * Tensor._make(weight.astype(g._data.dtype, copy=False))
    return Gather.apply(gw, ctx.dim, ctx.index)


def _weights(ctx: Any, scattered: np.ndarray) -> tuple:
    """The constant factors of the backward: ``grad_self = g * self_w`` and
    ``grad_src = gather(g * out_w) * src_w`` (+ a second term for ``prod``)."""
    x, vals, out, pos, reduce = ctx.x, ctx.vals, ctx.out, ctx.pos, ctx.reduce
    ones = np.ones(vals.shape, dtype=x.dtype)
    if reduce == "sum":
        return np.ones_like(x), None, ones, None
    if reduce == "mean":
        n = np.where(ctx.count == 0, 1, ctx.count).astype(x.dtype)
        return 1 / n, 1 / n, ones, None
    if reduce in ("amax", "amin"):
        self_is = x == out  # an excluded input is counted too (its share dropped by the caller)
        src_is = vals == out.reshape(-1)[pos]
        n = self_is.astype(x.dtype).reshape(-1)
        np.add.at(n, pos, src_is.astype(x.dtype))
        n = n.reshape(x.shape)
        return self_is / n, 1 / n, src_is.astype(x.dtype), None
    # prod: products of the other values, exact when zeros take part
    masked_self = np.where(x == 0, 1, x)
    masked_self_result, _ = _reduce_into(masked_self, pos, vals, "prod", ctx.include_self)
    src_zero = vals == 0
    zeros_at = np.bincount(pos, weights=src_zero, minlength=x.size)[pos]
    only_zero = src_zero & (zeros_at == 1)
    rest, _ = _reduce_into(x, pos, np.where(only_zero, 1, vals), "prod", ctx.include_self)
    src_w = np.where(only_zero, 0, 1 / np.where(src_zero, 1, vals))
    return masked_self_result / masked_self, out, src_w, (rest, only_zero)


def _reduce_name(reduce: Any, allowed: tuple, op: str) -> str:
    name = _ALIASES.get(reduce, reduce) if op == "scatter_reduce" else reduce
    if name not in allowed:
        if op == "scatter_reduce":
            raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
        raise RuntimeError(
            f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}."
        )
    return name


def _check_mean_dtype(x: np.ndarray, reduce: str, op: str) -> None:
    if reduce == "mean" and x.dtype == np.bool_:
        raise NotImplementedError(f'"{op}" with reduce="mean" not implemented for \'Bool\'')


def scatter_reduce(
    input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """Reduce ``src`` into a copy of ``input`` at the positions ``index`` names along ``dim``
    (``out[index[i][j]][j] = reduce(out[...], src[i][j])`` for ``dim=0``).

    Args:
        input (Tensor): the tensor reduced into.
        dim (int): the axis along which to index.
        index (Tensor): int64 (or int32) positions, with ``input``'s number of dimensions.
        src (Tensor): the values, ``input``'s dtype, at least ``index``'s size.
        reduce (str): ``"sum"``, ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``.
        include_self (bool): whether ``input``'s own values take part at the positions
            written to. Default: ``True``.
    """
    reduce = _reduce_name(reduce, _SCATTER_REDUCES, "scatter_reduce")
    for name, t in (("index", index), ("src", src)):
        if not isinstance(t, Tensor):
            raise TypeError(f"scatter_reduce(): argument '{name}' must be Tensor, not {type(t).__name__}")
    x, idx = input._data, index._data
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")  # (PyTorch's shared check)
    if src._data.dtype != x.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    _check_mean_dtype(x, reduce, "scatter_reduce")
    vectors = as_vectors(input, dim, index, src)
    if vectors is not None:
        a, i, b = vectors
        out = scatter_reduce(a, 0, i, b, reduce, include_self=include_self)
        return out.reshape(()) if x.ndim == 0 else out
    d = wrap_dim(dim, x.ndim)
    _check_gather_shapes(x, idx, d, "scatter_reduce", src._data)
    _check_bounds(idx, x.shape[d] if x.ndim else 1, d)
    index = index if idx.dtype == np.int64 else Tensor._make(idx.astype(np.int64))
    return ScatterReduce.apply(input, d, index, src, reduce, bool(include_self))


def index_reduce(
    input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """Reduce the slices of ``source`` into a copy of ``input``: slice ``i`` of ``source``
    along ``dim`` goes into slice ``index[i]`` of the output.

    Args:
        input (Tensor): the tensor reduced into.
        dim (int): the dimension along which to index.
        index (Tensor): a 1-D int64 (or int32) tensor with ``source.size(dim)`` entries.
        source (Tensor): ``input``'s dtype and shape except along ``dim``.
        reduce (str): ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``.
        include_self (bool): whether ``input``'s own values take part in the slices written
            to. Default: ``True``.
    """
    reduce = _reduce_name(reduce, _INDEX_REDUCES, "index_reduce")
    for name, t in (("index", index), ("source", source)):
        if not isinstance(t, Tensor):
            raise TypeError(f"index_reduce(): argument '{name}' must be Tensor, not {type(t).__name__}")
    x, s, idx = input._data, source._data, index._data
    if idx.ndim > 1:
        raise IndexError(
            f"index_reduce_(): Index is supposed to be a vector, but got dim: {idx.ndim} "
            f"with size: {list(idx.shape)}"
        )
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_reduce_(): Expected dtype int32/int64 for index")
    if s.dtype != x.dtype:
        raise RuntimeError("index_reduce_(): self and source must have the same scalar type")
    if x.dtype == np.bool_ and (not include_self or x.ndim <= 1):  # (PyTorch's kernels
        # that have no bool loop: the one excluding input, the one of vectors)
        kernel = "index_reduce_func_exclude_input_init" if not include_self else "index_func_"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    d = wrap_dim(dim, x.ndim)
    xs, ss = (x.reshape(1) if x.ndim == 0 else x), (s.reshape(1) if s.ndim == 0 else s)
    idx = idx.reshape(-1).astype(np.int64, copy=False)
    if idx.size != ss.shape[d]:
        raise RuntimeError(
            f"index_reduce_(): Number of indices ({idx.size}) should be equal to "
            f"source.size(dim): ({ss.shape[d]}), for dim: {d}"
        )
    if ss.ndim != xs.ndim or ss.shape[:d] + ss.shape[d + 1 :] != xs.shape[:d] + xs.shape[d + 1 :]:
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. "
            f"Got self.shape = {list(x.shape)} source.shape = {list(s.shape)}"
        )
    n = xs.shape[d]
    if idx.size and (idx.min() < 0 or idx.max() >= n):  # (negative entries too, as PyTorch)
        raise IndexError("index out of range in self")
    _check_mean_dtype(x, reduce, "index_reduce")
    idx = np.where(idx < 0, idx + n, idx)
    along = [1] * ss.ndim
    along[d] = idx.size
    full = Tensor._make(np.ascontiguousarray(np.broadcast_to(idx.reshape(along), ss.shape)))
    a = input.reshape(xs.shape) if x.ndim == 0 else input
    b = source.reshape(ss.shape) if s.ndim == 0 else source
    out = ScatterReduce.apply(a, d, full, b, reduce, bool(include_self))
    return out.reshape(()) if x.ndim == 0 else out


def scatter(
    input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None, reduce: str | None = None
) -> Tensor:
    """A copy of ``input`` with ``src`` (a tensor, or the number ``value``) written at the
    positions ``index`` names along ``dim``. ``reduce='add'`` or ``'multiply'`` reduces
    into ``input`` instead of writing (``scatter_reduce`` with ``"sum"``/``"prod"``)."""
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() missing 1 required positional argument: 'src' or 'value'")
    vectors = as_vectors(input, dim, index, src)
    if vectors is not None:
        out = scatter(vectors[0], 0, *vectors[1:], reduce=reduce)
        return out.reshape(()) if input._data.ndim == 0 else out
    d = _scatter_checks(input, dim, index, src, "scatter")
    if reduce is None:  # PyTorch's overloads: a tensor src (0), a number (1)
        return named_node(
            Scatter.apply(input, d, index, src), f"ScatterBackward{int(not isinstance(src, Tensor))}"
        )
    if reduce not in ("add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce!r}")
    if not isinstance(src, Tensor):
        src = Tensor._make(np.full(index._data.shape, src, dtype=input._data.dtype))
    if reduce == "multiply":
        return ScatterReduce.apply(input, d, index, src, "prod", True)
    return ScatterAdd.apply(input, d, index, src)
