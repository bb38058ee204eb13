"""TorchScript's IR types, ``torch._C.Graph``, ``Node``, ``Value`` and ``Block``: ONNX symbolic
functions name them in annotations (transformers' SEW-D dropout, evaluated when its module is
imported) and code checks ``isinstance`` against them. disttorch has no TorchScript IR
(``torch.jit`` runs modules eagerly), so none is ever made, and making one says so."""

from __future__ import annotations

from typing import Any

__all__ = ["Block", "Graph", "Node", "Value"]


class _IRType:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            f"torch._C.{type(self).__name__}: disttorch has no TorchScript IR to build one in "
            "(torch.jit.script and trace run modules eagerly)"
        )


class Graph(_IRType):
    """A TorchScript graph (a type to name; see the module docstring)."""


class Node(_IRType):
    """A node of a TorchScript graph (a type to name; see the module docstring)."""


class Value(_IRType):
    """A value of a TorchScript graph (a type to name; see the module docstring)."""


class Block(_IRType):
    """A block of a TorchScript graph (a type to name; see the module docstring)."""
