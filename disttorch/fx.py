"""``torch.fx``: importable; ``symbolic_trace``/``Tracer``/``GraphModule`` raise ``RuntimeError``
(disttorch has no graph capture). ``wrap`` returns its argument, so modules that mark leaf
functions at import time still import."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._no_graph_capture import no_graph_capture

__all__ = ["Graph", "GraphModule", "Tracer", "symbolic_trace", "wrap"]


def symbolic_trace(root: Any, concrete_args: dict | None = None) -> Any:
    """Raises ``RuntimeError``: disttorch cannot trace a program into a graph."""
    raise no_graph_capture("torch.fx.symbolic_trace")


def wrap(fn_or_name: Callable | str) -> Callable | str:
    """Mark a function as a leaf for tracing: returns it (nothing is traced here)."""
    return fn_or_name


class _Unavailable:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise no_graph_capture(f"torch.fx.{type(self).__name__}")


class Tracer(_Unavailable):
    """Raises ``RuntimeError`` when constructed (no graph capture)."""


class Graph(_Unavailable):
    """Raises ``RuntimeError`` when constructed (no graph capture)."""


class GraphModule(_Unavailable):
    """Raises ``RuntimeError`` when constructed (no graph capture)."""
