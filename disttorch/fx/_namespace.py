"""The names of a graph's nodes and of generated code's globals: valid Python identifiers,
unique, never a keyword or a builtin (``float`` becomes ``float_1``), numbered per base name
as PyTorch numbers them (``add``, ``add_1``, ``add_2``)."""

from __future__ import annotations

import builtins
import keyword
import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any

__all__ = ["Namespace", "target_to_name"]

_ILLEGAL = re.compile(r"[^0-9a-zA-Z_]+")
_NUMBERED = re.compile(r"(.*)_(\d+)$")
#: names generated code binds itself (its globals), which a node may not take
RESERVED = frozenset({"inf", "nan", "NoneType", "torch", "device", "fx_pytree", "pytree", "getattr"})


def _snake_case(name: str) -> str:
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


def target_to_name(target: Callable[..., Any] | str) -> str:
    """The base name of a node that calls ``target``: ``torch.relu`` -> ``relu``,
    ``"__getitem__"`` -> ``getitem``, ``"layer1.0.conv"`` -> ``layer1.0.conv`` (made legal later)."""
    if callable(target):
        name = getattr(target, "__name__", None) or type(target).__name__
    else:
        name = target[2:-2] if target.startswith("__") and target.endswith("__") else target
    return _snake_case(name)


class Namespace:
    """Hands out unique legal names: ``create_name("add")`` -> ``add``, then ``add_1``, ..."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._base_count: dict[str, int] = defaultdict(int)

    def create_name(self, candidate: str, obj: Any = None) -> str:
        """A fresh name like ``candidate`` (``obj``, when a builtin of that name, may keep it)."""
        candidate = _ILLEGAL.sub("_", candidate) or "_"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        match = _NUMBERED.match(candidate)
        base, num = (candidate, None) if match is None else (match.group(1), int(match.group(2)))
        candidate = base if num is None else f"{base}_{num}"
        if not num:
            num = self._base_count[base]
        while candidate in self._used or self._is_illegal(candidate, obj):
            num += 1
            candidate = f"{base}_{num}"
        self._used.add(candidate)
        self._base_count[base] = num
        return candidate

    def reserve(self, name: str) -> None:
        """Mark ``name`` as taken (a node that keeps its name)."""
        self._used.add(name)

    @staticmethod
    def _is_illegal(name: str, obj: Any) -> bool:
        if keyword.iskeyword(name) or name in RESERVED:
            return True
        return name in builtins.__dict__ and obj is not builtins.__dict__[name]
