"""``torch.SymInt``/``SymFloat``/``SymBool`` and the ``torch.sym_*`` helpers.

PyTorch's tracing compilers stand symbolic sizes in for ints while they trace; code written
for them calls ``torch.sym_max(a, b)`` rather than ``max`` and asks ``isinstance(n,
torch.SymInt)``. disttorch runs everything eagerly, so sizes are always plain numbers: the
classes exist for those checks (nothing is ever an instance) and each helper answers as
PyTorch's does for plain numbers."""

from __future__ import annotations

import builtins
import math
from collections.abc import Iterable
from typing import Any

__all__ = [
    "SymBool",
    "SymFloat",
    "SymInt",
    "sym_float",
    "sym_int",
    "sym_ite",
    "sym_max",
    "sym_min",
    "sym_not",
    "sym_sqrt",
    "sym_sum",
]


class _Symbolic:
    """A symbolic number of a tracing compiler; disttorch never makes one."""

    def __init__(self, node: Any) -> None:
        raise TypeError(
            f"{type(self).__name__} values exist only while a compiler traces; disttorch runs eagerly"
        )


class SymInt(_Symbolic):
    """A symbolic int (an ``isinstance`` target: sizes here are plain ints)."""


class SymFloat(_Symbolic):
    """A symbolic float (an ``isinstance`` target)."""


class SymBool(_Symbolic):
    """A symbolic bool (an ``isinstance`` target)."""


def sym_int(a: Any) -> int:
    """``a`` as an int, rounded toward zero."""
    return math.trunc(a) if isinstance(a, float) else builtins.int(a)


def sym_float(a: Any) -> float:
    """``a`` as a float."""
    return builtins.float(a)


def sym_max(a: Any, b: Any) -> Any:
    """The larger of ``a`` and ``b``."""
    return builtins.max(a, b)


def sym_min(a: Any, b: Any) -> Any:
    """The smaller of ``a`` and ``b``."""
    return builtins.min(a, b)


def sym_not(a: Any) -> bool:
    """``not a``."""
    return not a


def sym_ite(b: Any, t: Any, f: Any) -> Any:
    """``t if b else f``."""
    return t if b else f


def sym_sqrt(a: Any) -> float:
    """The square root of ``a``."""
    return math.sqrt(a)


def sym_sum(args: Iterable) -> Any:
    """The sum of ``args`` (0 for none)."""
    return builtins.sum(args)
