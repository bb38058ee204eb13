"""The batched tensor of ``vmap``: the function runs once on tensors that carry the batch.

A :class:`BatchedTensor` stands, inside one ``vmap`` level, for a tensor of its *logical*
shape; its ``value`` is the real tensor with the batch dimension in front (itself batched
when vmaps nest: the outer level's wrapper is inside, so the real array's leading dims are
the batches of the levels from the outermost in). Its own array is a read-only broadcast
zero of the logical shape and dtype, so ``shape``, ``dtype`` and ``dim()`` answer as
PyTorch's; every public function or method called on it reaches :meth:`__torch_function__`
(``_function_dispatch`` opts this disttorch class in, see :mod:`.._torch_function`), which
applies the batching rule of the operation (:mod:`._batch_rules`) at the innermost level
among its arguments, or else calls it once per slice and stacks the results
(:func:`per_slice`; so does an autograd Function reached without ``__torch_function__``).
Autograd sees only the real tensors, so gradients flow through, and a transform run inside
``vmap`` (``grad``, ``vjp``, ``jvp``) differentiates the real tensors once for the whole batch
(:func:`to_levels`, :func:`rewrap`).

Nothing here costs an ordinary op anything until the first ``vmap`` call installs the
dispatching twins (``_batch_rules.activate``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .._tensor import Tensor

__all__ = [
    "DATA_DEPENDENT",
    "BatchedTensor",
    "UntrackedBatch",
    "Level",
    "DISPATCH",
    "active_levels",
    "check_tracked",
    "level_of",
    "per_slice",
    "pop_level",
    "push_level",
    "rewrap",
    "rewrap_within",
    "top_level",
    "tracked_levels",
    "untracked",
    "to_levels",
    "to_levels_within",
    "wrap",
    "wrap_result",
]


class Level:
    """One running ``vmap``: its number (outer levels are smaller), batch size and randomness;
    ``slicing`` while an op runs once per slice of it (:func:`per_slice`)."""

    __slots__ = ("number", "size", "randomness", "slicing")

    def __init__(self, number: int, size: int, randomness: str) -> None:
        self.number, self.size, self.randomness = number, size, randomness
        self.slicing = False


class _Stack(threading.local):
    def __init__(self) -> None:
        self.levels: list[Level] = []
        self.untracked: list[Level] = []
        self.counter = 0


_STACK = _Stack()


def push_level(size: int, randomness: str) -> Level:
    """Enter a ``vmap`` level of batch ``size``."""
    _STACK.counter += 1
    level = Level(_STACK.counter, size, randomness)
    _STACK.levels.append(level)
    return level


def pop_level(level: Level) -> None:
    _STACK.levels.remove(level)


def active_levels() -> list[Level]:
    """The running ``vmap`` levels, outermost first."""
    return list(_STACK.levels)


def tracked_levels() -> list[Level]:
    """The running levels a derivative transform tracks its inputs at (see :func:`untracked`)."""
    return [lv for lv in _STACK.levels if lv not in _STACK.untracked]


class UntrackedBatch(RuntimeError):
    """A transform's function computed a value batched at a level it did not track its inputs
    at (see :func:`untracked`): the ``jvp`` that chose the level runs again, tracking it."""


def check_tracked(tensors: list) -> None:
    """Raise :class:`UntrackedBatch` when one of ``tensors`` is batched at an untracked level."""
    if _STACK.untracked:
        for t in tensors:
            while type(t) is BatchedTensor:
                if t._bt_level in _STACK.untracked:
                    raise UntrackedBatch("a value is batched at a level the inputs were not tracked at")
                t = t._bt_value


@contextmanager
def untracked(levels: list[Level]) -> Iterator[None]:
    """Inside, transforms do not track their inputs at ``levels`` (a ``jvp``'s levels where
    only the tangents are batched: nothing the function computes is batched there)."""
    _STACK.untracked.extend(levels)
    try:
        yield
    finally:
        del _STACK.untracked[len(_STACK.untracked) - len(levels) :]


#: the dispatch to the batching rules (``_batch_rules.apply_rule``, set when it is imported)
DISPATCH: list[Callable] = []


_NO_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"


class BatchedTensor(Tensor):
    """A tensor of one ``vmap`` level (see the module docstring); made by :func:`wrap`."""

    _function_dispatch = True

    @classmethod
    def __torch_function__(
        cls, func: Callable, types: Any, args: tuple = (), kwargs: dict | None = None
    ) -> Any:
        kwargs = kwargs or {}
        return DISPATCH[0](func, top_level(args, kwargs), args, kwargs)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise RuntimeError(_NO_STORAGE)  # its own array is a placeholder, as PyTorch's has none

    @property
    def __array_interface__(self) -> dict:
        raise AttributeError(_NO_STORAGE)


def wrap(value: Tensor, level: Level) -> BatchedTensor:
    """``value`` (batch dim in front) as a batched tensor of ``level``."""
    out = object.__new__(BatchedTensor)
    Tensor._init_state(out, np.broadcast_to(np.zeros((), dtype=value._data.dtype), tuple(value.shape)[1:]))
    out._rg = value.requires_grad
    out._bt_value = value
    out._bt_level = level
    return out


def level_of(x: Any) -> Level | None:
    """The level of a batched tensor (None for anything else)."""
    return x._bt_level if type(x) is BatchedTensor else None


def top_level(args: tuple, kwargs: dict) -> Level:
    best: Level | None = None
    for values in (args, kwargs.values()):
        for v in values:
            items = v if type(v) in (list, tuple) else (v,)
            for x in items:
                if type(x) is BatchedTensor and (best is None or x._bt_level.number > best.number):
                    best = x._bt_level
    assert best is not None
    return best


def _map_args(fn: Callable[[Any], Any], args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``args`` and ``kwargs`` with ``fn`` applied to each item (one level into lists and tuples)."""

    def one(v: Any) -> Any:
        if type(v) in (list, tuple):
            return type(v)(fn(x) for x in v)
        return fn(v)

    return tuple(one(v) for v in args), {k: one(v) for k, v in kwargs.items()}


def wrap_result(out: Any, level: Level) -> Any:
    """A rule's result on values, batched at ``level`` (tensors inside tuples included)."""
    if isinstance(out, Tensor):
        return wrap(out, level)
    if isinstance(out, (tuple, list)):
        items = [wrap_result(o, level) for o in out]
        make = getattr(type(out), "_make", None)  # a named tuple (torch.return_types.max)
        return make(items) if make is not None else type(out)(items)
    return out


DATA_DEPENDENT = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We don't "
    "support that yet, please file an issue at https://github.com/pytorch/pytorch/issues ."
)


def per_slice(func: Callable, level: Level, args: tuple, kwargs: dict, inplace: bool = False) -> Any:
    """The fallback of an operation without a batching rule: call it once per slice of the
    batch of ``level`` and stack the results (``args[0]`` back for an in-place op)."""
    from ..ops.shape import stack

    results = []
    slicing, level.slicing = level.slicing, True  # (a draw inside is already one per sample)
    try:
        for i in range(level.size):
            a, k = _map_args(lambda x, i=i: x._bt_value[i] if level_of(x) is level else x, args, kwargs)
            results.append(func(*a, **k))
    finally:
        level.slicing = slicing
    if inplace:
        return args[0]
    return _stack_results(results, level, stack, getattr(func, "__name__", "an operator"))


def _stack_results(results: list, level: Level, stack: Callable, name: str) -> Any:
    first = results[0]
    if isinstance(first, Tensor):
        if any(r.shape != first.shape for r in results[1:]):
            raise RuntimeError(
                "vmap: We do not support batching operators that can output dynamic shape. Attempted to vmap "
                f"over {name}: its results differ in shape between samples"
            )
        return wrap(stack(results), level)
    if isinstance(first, (tuple, list)):
        items = [_stack_results([r[k] for r in results], level, stack, name) for k in range(len(first))]
        make = getattr(type(first), "_make", None)
        return make(items) if make is not None else type(first)(items)
    if any(r != first for r in results[1:]):
        raise RuntimeError(DATA_DEPENDENT)
    return first


# ---------------------------------------------------------------- all levels at once (autograd)


def _unwrap_all(x: Tensor) -> tuple[Tensor, list[Level]]:
    """The real tensor under ``x``'s wrappers and their levels, outermost level first (the
    order of the real tensor's leading dims)."""
    levels = []
    while type(x) is BatchedTensor:
        levels.append(x._bt_level)
        x = x._bt_value
    return x, levels[::-1]


def to_levels(x: Tensor, levels: list[Level]) -> Tensor:
    """The real tensor of ``x`` with one leading dim per level of ``levels`` (outermost first):
    a level ``x`` is not batched at is expanded to its size."""
    real, have = _unwrap_all(x)
    for k, lv in enumerate(levels):
        if lv not in have:
            real = real.unsqueeze(k).expand(*real.shape[:k], lv.size, *real.shape[k:])
            have.insert(k, lv)
    return real


def rewrap(real: Tensor, levels: list[Level]) -> Tensor:
    """``real`` (one leading dim per level, outermost first) as the batched tensor of ``levels``."""
    for lv in levels:
        real = wrap(real, lv)
    return real


def to_levels_within(x: Tensor, levels: list[Level]) -> Tensor:
    """:func:`to_levels` of ``x`` (a cotangent or tangent, say) that may also be batched at
    levels not among ``levels`` (a vmap over a ``vjp_fn``): those stay batched around the
    result, whose real tensor has one leading dim per level of ``levels``."""
    real, have = _unwrap_all(x)
    extra = [lv for lv in have if lv not in levels]
    if not extra:
        return to_levels(x, levels)
    for lv in levels:  # expand to the missing ones, keeping the levels in order
        if lv not in have:
            k = sum(1 for h in have if h.number < lv.number)
            real = real.unsqueeze(k).expand(*real.shape[:k], lv.size, *real.shape[k:])
            have.insert(k, lv)
    order = [have.index(lv) for lv in extra] + [have.index(lv) for lv in levels]
    return rewrap(real.permute(*order, *range(len(have), real.ndim)), extra)


def rewrap_within(x: Tensor, levels: list[Level]) -> Tensor:
    """:func:`rewrap` of ``x`` (a real tensor of ``levels``) that may be batched at other
    levels too: the inverse of :func:`to_levels_within`."""
    real, extra = _unwrap_all(x)  # dims (*extra, *levels, *shape)
    if not extra:
        return rewrap(x, levels)
    have = extra + levels
    ordered = sorted(have, key=lambda lv: lv.number)
    dims = [have.index(lv) for lv in ordered]
    return rewrap(real.permute(*dims, *range(len(have), real.ndim)), ordered)
