"""Flatten and rebuild the nested containers ``torch.func`` transforms accept.

A *pytree* is a tensor (or any other leaf object) or a tuple, list, named tuple or dict
of pytrees. ``tree_flatten`` returns the leaves in order and a spec; ``tree_unflatten``
puts (new) leaves back into the same structure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["TreeSpec", "tree_flatten", "tree_map", "tree_unflatten"]


class TreeSpec:
    """The structure of a pytree: its container type, keys and children (a leaf has none)."""

    __slots__ = ("kind", "meta", "children")

    def __init__(self, kind: type | None, meta: Any = None, children: tuple = ()) -> None:
        self.kind = kind  # None for a leaf
        self.meta = meta  # dict keys, or None
        self.children = children

    @property
    def num_leaves(self) -> int:
        return 1 if self.kind is None else sum(c.num_leaves for c in self.children)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TreeSpec) and (self.kind, self.meta, self.children) == (
            other.kind,
            other.meta,
            other.children,
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.meta, self.children))

    def __repr__(self) -> str:
        if self.kind is None:
            return "*"
        inner = ", ".join(repr(c) for c in self.children)
        if self.meta is not None:
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.meta, self.children))
        return f"{self.kind.__name__}({inner})"


def tree_flatten(obj: Any) -> tuple[list, TreeSpec]:
    """The leaves of ``obj`` (depth first, dict entries in insertion order) and its spec."""
    leaves: list = []

    def walk(o: Any) -> TreeSpec:
        if isinstance(o, (tuple, list)):
            return TreeSpec(type(o), None, tuple(walk(c) for c in o))
        if isinstance(o, dict):
            return TreeSpec(type(o), tuple(o.keys()), tuple(walk(c) for c in o.values()))
        leaves.append(o)
        return TreeSpec(None)

    spec = walk(obj)
    return leaves, spec


def tree_unflatten(leaves: Any, spec: TreeSpec) -> Any:
    """Rebuild the structure ``spec`` with ``leaves`` in flattening order."""
    it = iter(leaves)

    def build(s: TreeSpec) -> Any:
        if s.kind is None:
            return next(it)
        kids = [build(c) for c in s.children]
        if s.meta is not None:
            return s.kind(zip(s.meta, kids))
        if issubclass(s.kind, tuple) and hasattr(s.kind, "_fields"):
            return s.kind(*kids)
        return s.kind(kids)

    return build(spec)


def tree_map(fn: Callable, obj: Any) -> Any:
    """``obj`` with every leaf ``x`` replaced by ``fn(x)``."""
    leaves, spec = tree_flatten(obj)
    return tree_unflatten([fn(x) for x in leaves], spec)
