"""Top-level functions that have a Tensor method twin (``torch.reshape`` / ``x.reshape``)
call the method of a tensor whose class overrides it and asks for this
(``_functions_call_methods = True``): a DTensor's view methods work in global sizes, a
quantized tensor's ``mean``/``relu``/``clamp`` keep its quantization, and the function form
must answer as the method does. Plain tensors take the function itself; anything else as
``input`` (a NumPy array, a list, a number where PyTorch takes none) is PyTorch's TypeError
(``tensor_only.check_input``), checked only off the plain-tensor path."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from .._tensor import Tensor
from .tensor_only import check_input

__all__ = ["route_to_method"]

_ABSENT = object()  # no first argument given: the function's own TypeError says so


def route_to_method(fn: Callable, name: str) -> Callable:
    """``fn`` (the function ``torch.<name>``) calling ``input.<name>(...)`` instead when
    ``input``'s class asks for it and overrides that method (if Tensor has a method
    ``name``), and refusing a non-tensor ``input``; ``fn`` itself where neither applies."""
    base = getattr(Tensor, name, None)
    try:
        first_name = next(iter(inspect.signature(fn).parameters))
    except (TypeError, ValueError, StopIteration):
        return fn
    checked = first_name in ("input", "self")
    if not callable(base) and not checked:
        return fn

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        first = args[0] if args else kwargs.get(first_name, _ABSENT)
        cls = type(first)
        if cls is Tensor or first is _ABSENT:
            return fn(*args, **kwargs)
        if getattr(cls, "_functions_call_methods", False) and getattr(cls, name, base) is not base:
            if args:
                return getattr(first, name)(*args[1:], **kwargs)
            rest = {k: v for k, v in kwargs.items() if k != first_name}
            return getattr(first, name)(**rest)
        if checked and not isinstance(first, Tensor):
            check_input(name, first, args)
        return fn(*args, **kwargs)

    return call
