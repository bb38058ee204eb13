"""``torch._dynamo``: the graph compiler's names, as seen by code that runs eagerly.

disttorch has no graph compiler (``torch.compile`` runs its argument eagerly): ``is_compiling()``
is True only while a compiled call runs (see ``disttorch.compiler``), the markers (``mark_dynamic``,
``mark_static_address``, ``allow_in_graph``, ``disable``, ...) return what they mark and
record nothing a program could observe (``graph_break`` ends a stretch that ``explain``
counts), ``reset()`` forgets which calls counted as compiles, and ``config``
holds the settings libraries set. ``OptimizedModule`` (what ``torch.compile`` returns for
a module, as in PyTorch) wraps a module and runs it.
"""

from __future__ import annotations

from typing import Any

from ..compiler import allow_in_graph, assume_constant_result, disable, is_compiling, list_backends, reset
from . import config, eval_frame, exc, utils
from .eval_frame import OptimizedModule, is_dynamo_supported, optimize, run
from .explain import explain, note_graph_break

__all__ = [
    "OptimizedModule",
    "allow_in_graph",
    "assume_constant_result",
    "config",
    "disable",
    "eval_frame",
    "exc",
    "explain",
    "graph_break",
    "is_compiling",
    "is_dynamo_supported",
    "list_backends",
    "mark_dynamic",
    "mark_static",
    "mark_static_address",
    "maybe_mark_dynamic",
    "optimize",
    "reset",
    "reset_code_caches",
    "run",
    "utils",
]


def mark_dynamic(
    t: Any,
    index: Any,
    *,
    hint_override: int | None = None,
    min: int | None = None,
    max: int | None = None,
    specialize_on: Any = None,
) -> None:
    """Mark dims of ``t`` as dynamic for the compiler (nothing is compiled here)."""


def maybe_mark_dynamic(t: Any, index: Any) -> None:
    """Mark dims of ``t`` as possibly dynamic (nothing is compiled here)."""


def mark_static(t: Any, index: Any = None) -> None:
    """Mark dims of ``t`` as static (nothing is compiled here)."""


def mark_static_address(t: Any, guard: bool = False) -> None:
    """Mark ``t``'s memory as fixed across calls, for CUDA graphs (none here)."""


def reset_code_caches() -> None:
    """Clear the compiled code caches (there are none)."""


def graph_break(msg: str = "") -> None:
    """Force a graph break: there is no graph to break, but ``explain`` counts it."""
    note_graph_break(msg)
