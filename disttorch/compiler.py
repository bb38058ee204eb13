"""``torch.compiler``: the controls of ``torch.compile``. disttorch runs every program
eagerly (``torch.compile`` returns its argument), so the markers return what they mark,
``is_compiling()`` is False and ``reset()`` has nothing to clear."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._compile import compile

__all__ = [
    "allow_in_graph",
    "assume_constant_result",
    "compile",
    "cudagraph_mark_step_begin",
    "disable",
    "is_compiling",
    "is_dynamo_compiling",
    "list_backends",
    "reset",
    "substitute_in_graph",
]


def _marker(fn: Callable | None = None, *args: Any, **kwargs: Any) -> Any:
    return fn if fn is not None else (lambda f: f)


def disable(fn: Callable | None = None, recursive: bool = True, *, reason: str | None = None) -> Any:
    """Exclude ``fn`` from compilation: returns ``fn`` (usable as ``@disable`` or ``@disable()``)."""
    return _marker(fn)


def allow_in_graph(fn: Callable) -> Callable:
    """Returns ``fn`` (nothing is traced)."""
    return fn


def assume_constant_result(fn: Callable) -> Callable:
    """Returns ``fn`` (nothing is traced)."""
    return fn


def substitute_in_graph(
    original_fn: Callable, *, can_constant_fold_through: bool = False, skip_signature_check: bool = False
) -> Callable:
    """A decorator returning the decorated function unchanged (nothing is traced)."""
    return lambda fn: fn


def is_compiling() -> bool:
    """False: code never runs under a graph compiler here."""
    return False


def is_dynamo_compiling() -> bool:
    """False: code never runs under TorchDynamo here."""
    return False


def reset() -> None:
    """Clear compilation caches (there are none)."""


def cudagraph_mark_step_begin() -> None:
    """Nothing to mark (no CUDA graphs)."""


def list_backends(exclude_tags: Any = ("debug", "experimental")) -> list[str]:
    """The backend names ``torch.compile`` accepts (all run eagerly here)."""
    from ._compile import _BACKENDS

    return sorted(_BACKENDS)
