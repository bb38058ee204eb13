"""The pointwise batching rule of ``vmap`` (elementwise ops with broadcasting), which the
other families reuse: batched values get size-1 dims after their batch dim up to the largest
logical rank among the tensor arguments, so that the batch dims line up under broadcasting."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ._batched import Level, level_of, wrap_result

__all__ = ["in_place_error", "pad_to", "pointwise", "tensors_of"]


def tensors_of(args: tuple, kwargs: dict) -> list[Tensor]:
    """The tensor arguments of a call (one level into lists and tuples)."""
    found = []
    for v in (*args, *kwargs.values()):
        for x in v if type(v) in (list, tuple) else (v,):
            if isinstance(x, Tensor):
                found.append(x)
    return found


def pointwise(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """An elementwise op with broadcasting: each batched value gets size-1 dims after its
    batch dim up to the largest logical rank, so the batch dims line up."""
    rank = max(len(t.shape) for t in tensors_of(args, kwargs))

    def pad(x: Any) -> Any:
        return pad_to(x, rank) if level_of(x) is level else x

    def one(v: Any) -> Any:
        return type(v)(pad(x) for x in v) if type(v) in (list, tuple) else pad(v)

    a = tuple(one(v) for v in args)
    k = {key: one(v) for key, v in kwargs.items()}
    return wrap_result(func(*a, **k), level)


def pad_to(x: Tensor, rank: int) -> Tensor:
    """The value of the batched ``x`` with size-1 dims after the batch dim up to logical ``rank``."""
    v = x._bt_value
    short = rank - len(x.shape)
    return v if short <= 0 else v.reshape((v.shape[0],) + (1,) * short + tuple(x.shape))


def in_place_error(self: Tensor, other_shapes: list) -> RuntimeError:
    """PyTorch's error for an in-place op writing batched values into an unbatched ``self``."""
    shape = [*self.shape]
    rank = max(len(s) for s in [shape, *other_shapes])
    padded = [[1] * (rank - len(s)) + list(s) for s in [shape, *other_shapes]]
    full = [max(dims) for dims in zip(*padded)]
    return RuntimeError(f"output with shape {shape} doesn't match the broadcast shape {full}")
