"""``torch.export``: importable; capturing a program raises ``RuntimeError`` (disttorch has no
graph capture). ``save``/``load`` of exported programs raise the same error."""

from __future__ import annotations

from typing import Any

from ._no_graph_capture import no_graph_capture

__all__ = ["Dim", "ExportedProgram", "export", "load", "save"]


class ExportedProgram:
    """Never constructed here (no graph capture)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise no_graph_capture("torch.export.ExportedProgram")


def export(
    mod: Any,
    args: tuple = (),
    kwargs: dict | None = None,
    *,
    dynamic_shapes: Any = None,
    strict: bool = False,
    preserve_module_call_signature: tuple = (),
) -> ExportedProgram:
    """Raises ``RuntimeError``: disttorch cannot capture a graph."""
    raise no_graph_capture("torch.export.export")


def save(ep: Any, f: Any, **kwargs: Any) -> None:
    """Raises ``RuntimeError`` (there are no exported programs here)."""
    raise no_graph_capture("torch.export.save")


def load(f: Any, **kwargs: Any) -> ExportedProgram:
    """Raises ``RuntimeError`` (there are no exported programs here)."""
    raise no_graph_capture("torch.export.load")


class Dim:
    """``torch.export.Dim(name, *, min=None, max=None)``: a named dynamic dimension, kept for
    ``dynamic_shapes`` specs (which nothing consumes here)."""

    AUTO, STATIC, DYNAMIC = "AUTO", "STATIC", "DYNAMIC"

    def __init__(self, name: str, *, min: int | None = None, max: int | None = None) -> None:
        self.__name__, self.min, self.max = name, min, max

    def __repr__(self) -> str:
        return f"Dim({self.__name__!r}, min={self.min}, max={self.max})"
