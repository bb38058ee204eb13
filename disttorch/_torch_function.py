"""The ``__torch_function__`` protocol's dispatch, at the core layer so that Tensor methods
(``Tensor.module_load``) can offer it; ``torch.overrides`` re-exports it with the rest of
the protocol's helpers. ``torch._assert`` (an assert that tracing records) dispatches here."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ._tensor import Tensor

__all__ = ["_assert", "handle_torch_function", "has_torch_function"]


def _overrides(obj: Any) -> bool:
    kind = type(obj)
    return (
        kind is not Tensor
        and getattr(kind, "__torch_function__", None) is not None
        and getattr(kind, "__torch_function__", None) is not getattr(Tensor, "__torch_function__", None)
    )


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Whether any of ``relevant_args`` overrides ``__torch_function__``."""
    return any(_overrides(a) for a in relevant_args)


def _overloaded_args(relevant_args: Iterable[Any]) -> list:
    out: list = []
    for arg in relevant_args:
        if not _overrides(arg) or any(type(a) is type(arg) for a in out):
            continue
        at = next((i for i, a in enumerate(out) if issubclass(type(arg), type(a))), len(out))
        out.insert(at, arg)
    return out


def handle_torch_function(
    public_api: Callable, relevant_args: Iterable[Any], *args: Any, **kwargs: Any
) -> Any:
    """Call ``__torch_function__(public_api, types, args, kwargs)`` of the overriding arguments
    until one returns something other than ``NotImplemented``; raise ``TypeError`` if none does."""
    overloaded = _overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    for arg in overloaded:
        result = type(arg).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = getattr(public_api, "__name__", repr(public_api))
    raise TypeError(
        f"no implementation found for '{name}' on types that implement __torch_function__: "
        f"{[type(a) for a in overloaded]}"
    )


def _assert(condition: Any, message: str) -> None:
    """``torch._assert``: ``assert condition, message`` that a tracer can record (a proxy
    condition goes to its ``__torch_function__``)."""
    if type(condition) is not Tensor and has_torch_function((condition,)):
        return handle_torch_function(_assert, (condition,), condition, message)
    if not condition:
        raise AssertionError(message)
    return None


_assert.__module__ = "disttorch"  # published as torch._assert: pickles and prints by that name
