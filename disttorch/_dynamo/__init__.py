"""``torch._dynamo``: the graph compiler's names, as seen by code that runs eagerly.

disttorch has no graph compiler (``torch.compile`` runs its argument eagerly): ``is_compiling()``
is True only while a compiled call runs (see ``disttorch.compiler``), ``mark_dynamic`` and
``mark_static`` record their dims on the tensor as PyTorch's (``_dynamo_dynamic_indices``,
``_dynamo_static_indices``), which decide when a call counts as a recompile (see
``disttorch._compile_cache``), the other markers (``mark_static_address``, ``allow_in_graph``,
``disable``, ...) return what they mark and record nothing a program could observe
(``graph_break`` ends a stretch that ``explain`` counts), ``reset()`` forgets which calls
counted as compiles, and ``config``
holds the settings libraries set. ``OptimizedModule`` (what ``torch.compile`` returns for
a module, as in PyTorch) wraps a module and runs it.
"""

from __future__ import annotations

from typing import Any

from .. import _compile_cache
from .._tensor import Tensor
from ..compiler import allow_in_graph, assume_constant_result, disable, is_compiling, list_backends, reset
from . import config, eval_frame, exc, utils
from .eval_frame import OptimizedModule, is_dynamo_supported, optimize, run
from .explain import explain, note_graph_break


def _recompile_limit() -> int:
    return config.recompile_limit


_compile_cache.recompile_limit = _recompile_limit

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
    """Mark dim ``index`` (an int or several) of tensor ``t`` dynamic: a compiled call's
    first compile takes any size there (a recompile counts as PyTorch's would)."""
    _mark(t, index, "_dynamo_dynamic_indices", "mark_dynamic")


def maybe_mark_dynamic(t: Any, index: Any) -> None:
    """Mark dims of ``t`` as possibly dynamic (PyTorch's hint; no recompile count changes)."""


def mark_static(t: Any, index: Any = None) -> None:
    """Mark dim ``index`` (an int, several, or ``None``: every dim) of tensor ``t`` static:
    it never becomes dynamic, a new size there always recompiles."""
    if isinstance(t, type):  # (a module class: PyTorch treats its instances' attributes as static)
        t._dynamo_marked_static = True
        return
    if index is None and isinstance(t, Tensor):
        index = range(t.dim())
    _mark(t, index, "_dynamo_static_indices", "mark_static")


def _mark(t: Any, index: Any, attribute: str, what: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"torch._dynamo.{what}: expected a tensor, got {type(t).__name__}")
    dims = [index] if isinstance(index, int) else list(index)
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in dims):
        raise TypeError(f"torch._dynamo.{what}: the dims must be ints, got {index!r}")
    setattr(t, attribute, {*getattr(t, attribute, ()), *dims})


def mark_static_address(t: Any, guard: bool = False) -> None:
    """Mark ``t``'s memory as fixed across calls, for CUDA graphs (none here)."""


def reset_code_caches() -> None:
    """Clear the compiled code caches (there are none)."""


def graph_break(msg: str = "") -> None:
    """Force a graph break: there is no graph to break, but ``explain`` counts it."""
    note_graph_break(msg)
