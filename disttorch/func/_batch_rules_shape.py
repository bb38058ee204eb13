"""``vmap``'s batching rules for ops with ``dim=`` arguments (reductions, scans, softmax,
sorting, splitting: the logical dims shifted past the batch dim), reshaping and views,
indexing, and concatenation (an unbatched input expanded to the batch)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._creation import arange
from .._dtype import bool as bool_
from .._dtype import int8, int16, int32, int64, uint8
from .._tensor import Tensor
from ._batch_pointwise import in_place_error, pad_to, pointwise, tensors_of
from ._batched import Level, level_of, wrap, wrap_result

__all__ = ["SHAPE_FUNCTION_RULES", "SHAPE_RULES", "logical_dim"]

_REQUIRED = object()  # a dim argument without default: absent means the op itself complains
_ALL = object()  # None or absent: all dims (a full reduction)
_IMPLICIT = object()  # F.softmax's legacy implicit dim
_WHOLE = object()  # None or absent: the op works on the flattened tensor (no rule: per slice)


def logical_dim(d: int, rank: int) -> int:
    """The real dim (past the batch dim) of logical dim ``d`` of a rank-``rank`` tensor."""
    if not -rank <= d < rank:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {d})"
        )
    return d % rank + 1


def _real_dims(v: Any, rank: int) -> Any:
    """:func:`logical_dim` of an int or of each int of a list or tuple."""
    if isinstance(v, (list, tuple)):
        return type(v)(logical_dim(d, rank) for d in v)
    return logical_dim(v, rank)


def _only_self(level: Level, args: tuple, kwargs: dict) -> bool:
    """Whether the first argument is the only one batched at ``level``."""
    return level_of(args[0]) is level and not any(level_of(t) is level for t in tensors_of(args[1:], kwargs))


def dim_op(*params: tuple, extra: int = 0, tuple_result: bool = False) -> Callable:
    """A rule for an op of one batched tensor whose ``params`` ((position, name, default)
    each) are dims of it (of the result's rank with ``extra``); a full reduction (``_ALL``)
    runs over the flattened logical dims."""

    def rule(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
        if not _only_self(level, args, kwargs):
            return NotImplemented
        x = args[0]
        rank = len(x.shape)
        if rank + extra == 0:
            return NotImplemented  # (a dim of a 0-d tensor: once per slice)
        a, k = list(args), dict(kwargs)
        a[0] = x._bt_value
        for pos, name, default in params:
            in_args = name not in k and len(a) > pos
            v = k.get(name, a[pos] if in_args else default)
            if v is _REQUIRED or isinstance(v, bool):
                if isinstance(v, bool):
                    return NotImplemented
                continue
            if v is _WHOLE or (v is None and default is _WHOLE):
                return NotImplemented
            if v is _IMPLICIT or (v is None and default is _IMPLICIT):
                v = 0 if rank in (0, 1, 3) else 1
            elif v is None or v is _ALL:
                if default is not _ALL:
                    continue
                return _full_reduction(func, level, x, a, k, pos, name, in_args, tuple_result)
            new = _real_dims(v, rank + extra)
            if in_args:
                a[pos] = new
            else:
                k[name] = new
        return wrap_result(func(*a, **k), level)

    return rule


def _full_reduction(
    func: Callable,
    level: Level,
    x: Tensor,
    a: list,
    k: dict,
    pos: int,
    name: str,
    in_args: bool,
    tuple_result: bool,
) -> Any:
    rank = len(x.shape)
    a[0] = x._bt_value.reshape(level.size, -1)
    if in_args:
        a[pos] = 1
    else:
        k[name] = 1
    out = func(*a, **k)
    if tuple_result:
        out = out[0]
    if out.dim() == 2:  # keepdim
        out = out.reshape((level.size,) + (1,) * rank)
    return wrap(out, level)


def _max_min(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    if len(args) > 1 and isinstance(args[1], Tensor) or isinstance(kwargs.get("other"), Tensor):
        return pointwise(func, level, args, kwargs)
    return _REDUCE_TUPLE(func, level, args, kwargs)


_REDUCE = dim_op((1, "dim", _ALL))
_REDUCE_TUPLE = dim_op((1, "dim", _ALL), tuple_result=True)


def _value(x: Tensor, level: Level) -> Tensor:
    """The value of ``x`` at ``level`` (an unbatched ``x`` expanded to the batch)."""
    if level_of(x) is level:
        return x._bt_value
    return x.unsqueeze(0).expand(level.size, *x.shape)


def _shape_args(args: tuple, kwargs: dict, *names: str) -> tuple:
    shape = args[1:] or next((kwargs[n] for n in names if n in kwargs), ())
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(shape)


def _reshape(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    x = args[0]
    if not _only_self(level, args, kwargs):
        return NotImplemented
    shape = _shape_args(args, kwargs, "shape", "size")
    if not all(isinstance(s, int) for s in shape):
        return pointwise(func, level, args, kwargs)  # view(dtype)
    v = x._bt_value
    return wrap(v.reshape(level.size, *shape), level)


def _reshape_as(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    x, other = args[0], args[1]
    if level_of(x) is not level:
        return NotImplemented
    return wrap(x._bt_value.reshape(level.size, *other.shape), level)


def _expand(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    if not _only_self(level, args, kwargs):
        return NotImplemented
    sizes = _shape_args(args, kwargs, "size")
    return wrap(pad_to(args[0], len(sizes)).expand(level.size, *sizes), level)


def _expand_as(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    if level_of(args[0]) is not level:
        return NotImplemented
    sizes = tuple(args[1].shape)
    return wrap(pad_to(args[0], len(sizes)).expand(level.size, *sizes), level)


def _repeat(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    if not _only_self(level, args, kwargs):
        return NotImplemented
    sizes = _shape_args(args, kwargs, "repeats", "dims")
    if func.__name__ == "tile":
        sizes = (1,) * (len(args[0].shape) - len(sizes)) + sizes
    return wrap(pad_to(args[0], len(sizes)).repeat(1, *sizes), level)


def _permute(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    if not _only_self(level, args, kwargs):
        return NotImplemented
    dims = _shape_args(args, kwargs, "dims")
    rank = len(args[0].shape)
    return wrap(args[0]._bt_value.permute(0, *(logical_dim(d, rank) for d in dims)), level)


def _transposes(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """``t()``, ``T``, ``H``, ``mT``, ``mH``."""
    x = args[0]
    if level_of(x) is not level:
        return NotImplemented
    v, rank, name = x._bt_value, len(x.shape), func.__name__
    if name in ("mT", "mH"):
        out = v.transpose(-2, -1) if rank >= 2 else None
        if out is None:
            return NotImplemented
    elif name == "t" and rank > 2:
        return NotImplemented
    else:
        out = v.permute(0, *range(rank, 0, -1))
    return wrap(out.conj() if name in ("H", "mH") else out, level)


def _squeeze(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    if dim is not None:
        return _SQUEEZE_DIM(func, level, args, kwargs)
    if not _only_self(level, args, kwargs):
        return NotImplemented
    v = args[0]._bt_value
    for d in reversed([i + 1 for i, s in enumerate(args[0].shape) if s == 1]):
        v = v.squeeze(d)
    return wrap(v, level)


_SQUEEZE_DIM = dim_op((1, "dim", _REQUIRED))


def _adjacent_advanced(items: tuple) -> bool:
    """Whether the tensor (and list) indices of ``items`` are next to each other once the
    ints (selections) are left out: then they index in place, as after a leading ``:``."""
    kept = [isinstance(it, (Tensor, list)) for it in items if not isinstance(it, int) or isinstance(it, bool)]
    where = [i for i, adv in enumerate(kept) if adv]
    return not where or where[-1] - where[0] + 1 == len(where)


_MASK_INDEX = (
    "vmap: We do not support batching operators that can support dynamic shape. Attempting to batch over "
    "indexing with a boolean mask."
)


def _refuse_batched_masks(items: tuple) -> None:
    """PyTorch's error for indexing by a batched boolean mask (the result's shape would depend
    on each sample's values, even where the counts agree)."""
    if any(level_of(it) is not None and it.dtype in (bool_, uint8) for it in items):
        raise RuntimeError(_MASK_INDEX)


def _masked_select(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """``masked_select`` by a batched mask is refused, as by PyTorch; an unbatched mask selects
    per slice (same count in each)."""
    mask = args[1] if len(args) > 1 else kwargs.get("mask")
    if level_of(mask) is not None:
        raise RuntimeError(
            "vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot support this "
            "because for each batch this would return a differently shaped Tensor. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues if you need this feature."
        )
    return NotImplemented


def _nonzero(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    if kwargs.get("as_tuple"):
        return NotImplemented
    raise RuntimeError(
        "vmap: We do not support batching operators that can output dynamic shape. Attempted to vmap over "
        "aten::nonzero. Please file an issue at https://github.com/pytorch/pytorch/issues if you need this "
        "feature."
    )


def _getitem(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    x, key = args[0], args[1]
    items = key if type(key) is tuple else (key,)
    _refuse_batched_masks(items)
    if any(level_of(it) is level for it in items):
        return _batched_index(x, items, level)
    if level_of(x) is not level:
        return NotImplemented
    if any(level_of(it) is not None for it in items) or not _adjacent_advanced(items):
        return NotImplemented
    return wrap(x._bt_value[(slice(None), *items)], level)


def _batched_index(x: Tensor, items: tuple, level: Level) -> Any:
    """``x[items]`` with batched integer index tensors among ``items`` (slices and index
    tensors, the tensors next to each other): the batch becomes one more index of the group,
    an ``arange`` over the batch dim of ``x`` moved to the group's place (or, for an unbatched
    ``x``, the index values' own batch dim), and the result's batch dim is moved to the front."""
    tensors = [it for it in items if isinstance(it, Tensor)]
    if not all(isinstance(it, (slice, Tensor)) for it in items) or not _adjacent_advanced(items):
        return NotImplemented
    if any(t.dtype not in (int64, int32, int16, int8) for t in tensors):
        return NotImplemented  # (boolean masks: results whose shape depends on the values)
    at = next(i for i, it in enumerate(items) if isinstance(it, Tensor))
    rank = max(len(t.shape) for t in tensors)
    group = [pad_to(t, rank) if level_of(t) is level else t for t in tensors]
    if level_of(x) is level:
        batch = arange(level.size).reshape((level.size,) + (1,) * rank)
        real, group = x._bt_value.movedim(0, at), [batch, *group]
    else:
        real = x
    rest = [it for it in items[at:] if not isinstance(it, Tensor)]
    return wrap(real[(*items[:at], *group, *rest)].movedim(at, 0), level)


def _setitem(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    x, key, value = args
    items = key if type(key) is tuple else (key,)
    _refuse_batched_masks(items)
    if level_of(x) is not level:
        if level_of(value) is level:
            raise in_place_error(x, [[level.size, *value.shape]])
        return NotImplemented
    if any(level_of(it) is not None for it in items) or not _adjacent_advanced(items):
        return NotImplemented
    real_key = (slice(None), *items)
    if level_of(value) is level:
        value = pad_to(value, x._bt_value[real_key].dim() - 1)
    x._bt_value[real_key] = value
    return None


def _concat(stacking: bool) -> Callable:
    def rule(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
        tensors = args[0] if args else kwargs["tensors"]
        dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
        if not isinstance(dim, int) or len(args) > 2 or set(kwargs) - {"tensors", "dim"}:
            return NotImplemented
        batched = next(t for t in tensors if level_of(t) is level)
        rank = len(batched.shape) + stacking
        values = [_value(t, level) for t in tensors if stacking or t.dim() > 1 or t.shape[0] > 0]
        return wrap(func(values, logical_dim(dim, rank)), level)

    return rule


def _gather_like(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """``gather(dim, index)`` and ``scatter(dim, index, src)`` (out of place): every tensor
    expanded to the batch, the dim shifted."""
    if len(args) < 3 or kwargs or not isinstance(args[1], int):
        return NotImplemented
    rank = len(args[0].shape)
    if rank == 0:
        return NotImplemented
    rest = [_value(t, level) if isinstance(t, Tensor) else t for t in args[2:]]
    return wrap(func(_value(args[0], level), logical_dim(args[1], rank), *rest), level)


def _on_matrices(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """An op on the last two dims that takes any leading (batch) dims: on the value as it is."""
    if not _only_self(level, args, kwargs) or len(args[0].shape) < 2:
        return NotImplemented
    return wrap_result(func(args[0]._bt_value, *args[1:], **kwargs), level)


def _table() -> dict[str, Callable]:
    rules: dict[str, Callable] = {}
    for name in "sum nansum mean nanmean amax amin argmax argmin all any count_nonzero prod std var".split():
        rules[name] = _REDUCE
    for name in "std_mean var_mean aminmax".split():
        rules[name] = dim_op((1, "dim", _ALL))
    for name in "median nanmedian".split():
        rules[name] = _REDUCE_TUPLE
    rules["max"] = rules["min"] = _max_min
    for name in "norm vector_norm".split():
        rules[name] = dim_op((2, "dim", _ALL))
    for name in "logsumexp cumsum cumprod cummax cummin logcumsumexp softmax log_softmax unflatten".split():
        rules[name] = dim_op((1, "dim", _REQUIRED))
    for name in "softmax log_softmax softmin".split():
        rules["F." + name] = dim_op((1, "dim", _IMPLICIT))
    rules["F.normalize"] = dim_op((2, "dim", 1))
    rules["F.glu"] = dim_op((1, "dim", -1))
    for name in "sort argsort mode".split():
        rules[name] = dim_op((1, "dim", -1))
    for name in "topk kthvalue diff".split():
        rules[name] = dim_op((2, "dim", -1))
    for name in "unbind".split():
        rules[name] = dim_op((1, "dim", 0))
    for name in "split chunk tensor_split split_with_sizes".split():
        rules[name] = dim_op((2, "dim", 0))
    for name in "select narrow index_select".split():
        rules[name] = dim_op((1, "dim", _REQUIRED))
    for name in "transpose swapaxes swapdims".split():
        rules[name] = dim_op((1, "dim0", _REQUIRED), (2, "dim1", _REQUIRED))
    for name in "movedim moveaxis".split():
        rules[name] = dim_op((1, "source", _REQUIRED), (2, "destination", _REQUIRED))
    rules["flip"] = dim_op((1, "dims", _REQUIRED))
    rules["roll"] = dim_op((2, "dims", _WHOLE))
    rules["repeat_interleave"] = dim_op((2, "dim", _WHOLE))
    rules["unsqueeze"] = dim_op((1, "dim", _REQUIRED), extra=1)
    rules["flatten"] = dim_op((1, "start_dim", 0), (2, "end_dim", -1))
    rules["diagonal"] = dim_op((2, "dim1", 0), (3, "dim2", 1))
    rules["squeeze"] = _squeeze
    for name in "tril triu det logdet slogdet inverse matrix_exp matrix_power cholesky pinverse".split():
        rules[name] = _on_matrices
    for name in "view reshape".split():
        rules[name] = _reshape
    for name in "view_as reshape_as".split():
        rules[name] = _reshape_as
    rules["expand"] = rules["broadcast_to"] = _expand
    rules["expand_as"] = _expand_as
    rules["repeat"] = rules["tile"] = _repeat
    rules["permute"] = _permute
    for name in "t T H mT mH".split():
        rules[name] = _transposes
    rules["__getitem__"] = _getitem
    rules["__setitem__"] = _setitem
    rules["masked_select"] = _masked_select
    rules["nonzero"] = _nonzero
    rules["cat"] = rules["concat"] = rules["concatenate"] = _concat(False)
    rules["stack"] = _concat(True)
    rules["gather"] = rules["scatter"] = rules["scatter_add"] = _gather_like
    return rules


def _flip_function(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """``Flip`` (flip's backward node on batched gradients): the dims shifted past the batch."""
    g, dims = args
    if level_of(g) is not level or kwargs:
        return NotImplemented
    rank = len(g.shape)
    dims = (dims,) if isinstance(dims, int) else dims
    return wrap(func(g._bt_value, tuple(d % rank + 1 for d in dims)), level)


def _index_put_function(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """``IndexPut`` (the backward node of reading ``x[index]``) on batched gradients: a leading
    full slice put before the index, when its array indices (with the ints among them) stay
    next to each other, so that NumPy keeps their result dims after the batch."""
    g, shape, index, accumulate = args
    if level_of(g) is not level or kwargs:
        return NotImplemented
    items = index if type(index) is tuple else (index,)
    if any(isinstance(it, np.ndarray) and it.ndim for it in items):
        where = [i for i, it in enumerate(items) if isinstance(it, (np.ndarray, int, np.integer))]
        if where[-1] - where[0] + 1 != len(where):
            return NotImplemented
    return wrap(func(g._bt_value, (level.size, *shape), (slice(None), *items), accumulate), level)


#: rules for autograd Functions of this family (backward nodes reached with batched gradients)
SHAPE_FUNCTION_RULES: dict[str, Callable] = {"Flip": _flip_function, "IndexPut": _index_put_function}

SHAPE_RULES = _table()
