"""``torch.overrides``: the helpers of the ``__torch_function__`` protocol for types that
stand in for tensors. ``has_torch_function`` finds arguments whose type defines
``__torch_function__``; ``handle_torch_function`` dispatches a call to them, in PyTorch's
order (subclasses before their bases, otherwise left to right). disttorch's own ops do not
call the protocol; a library's functions can, with these helpers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ._tensor import Tensor

__all__ = [
    "TorchFunctionMode",
    "get_ignored_functions",
    "get_overridable_functions",
    "get_testing_overrides",
    "handle_torch_function",
    "has_torch_function",
    "is_tensor_like",
    "is_tensor_method_or_property",
]


def _overrides(obj: Any) -> bool:
    kind = type(obj)
    return (
        kind is not Tensor
        and getattr(kind, "__torch_function__", None) is not None
        and getattr(kind, "__torch_function__", None) is not getattr(Tensor, "__torch_function__", None)
    )


def is_tensor_like(inp: Any) -> bool:
    """True for a Tensor or an object whose type defines ``__torch_function__``."""
    return isinstance(inp, Tensor) or hasattr(type(inp), "__torch_function__")


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


def get_ignored_functions() -> set[Callable]:
    """Public functions that cannot be overridden: none are listed here."""
    return set()


def get_overridable_functions() -> dict[Any, list[Callable]]:
    """The public functions of ``torch`` (this package) and the methods of ``Tensor``."""
    import disttorch

    funcs = [
        getattr(disttorch, n)
        for n in dir(disttorch)
        if not n.startswith("_")
        and callable(getattr(disttorch, n))
        and not isinstance(getattr(disttorch, n), type)
    ]
    methods = [
        getattr(Tensor, n) for n in dir(Tensor) if not n.startswith("_") and callable(getattr(Tensor, n))
    ]
    return {disttorch: funcs, Tensor: methods}


def get_testing_overrides() -> dict[Callable, Callable]:
    """Dummy overrides for testing: none are provided."""
    return {}


def is_tensor_method_or_property(func: Callable) -> bool:
    """Whether ``func`` is a method or property of ``Tensor``."""
    name = getattr(func, "__name__", None)
    return name is not None and getattr(Tensor, name, None) is func


_MODE_STACK: list[TorchFunctionMode] = []


class TorchFunctionMode:
    """A context manager whose ``__torch_function__(func, types, args, kwargs)`` PyTorch calls
    for every torch function run inside it.

    Difference from PyTorch: disttorch's ops do not dispatch through ``__torch_function__``,
    so a mode is entered and exited (and listed by ``_get_current_function_mode_stack``) but
    its ``__torch_function__`` is not called by the ops run inside it; a mode that only passes
    calls through (Lightning's ``_EmptyInit(enabled=False)``) behaves the same.
    """

    inner: TorchFunctionMode | None = None

    def __init__(self) -> None:
        pass

    def __torch_function__(
        self, func: Callable, types: Any, args: tuple = (), kwargs: dict | None = None
    ) -> Any:
        return func(*args, **(kwargs or {}))

    def __enter__(self) -> TorchFunctionMode:
        _MODE_STACK.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if _MODE_STACK and _MODE_STACK[-1] is self:
            _MODE_STACK.pop()

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchFunctionMode:
        """Make a mode and enter it."""
        return cls(*args, **kwargs).__enter__()


def _get_current_function_mode_stack() -> list[TorchFunctionMode]:
    """The modes entered, innermost last."""
    return list(_MODE_STACK)
