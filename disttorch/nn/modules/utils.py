"""Argument helpers that PyTorch's layers (and user layers copied from them) import from
``torch.nn.modules.utils``: ``_single``, ``_pair``, ``_triple``, ``_quadruple``,
``_ntuple``, ``_reverse_repeat_tuple``, ``_list_with_default``."""

from __future__ import annotations

import collections.abc
from collections.abc import Callable
from itertools import repeat
from typing import Any

__all__: list = []


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple]:
    """A function turning a scalar into an ``n``-tuple (iterables are returned as tuples)."""

    def parse(x: Any) -> tuple:
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t: Any, n: int) -> tuple:
    """``(t[-1],) * n + (t[-2],) * n + ...``: ``F.pad`` amounts from per-dim paddings."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size: Any, defaults: Any) -> list:
    """``out_size`` with its None entries replaced by the trailing sizes in ``defaults``."""
    if isinstance(out_size, (int, float)):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size) :])]
