"""Top-level functions that have a Tensor method twin (``torch.reshape`` / ``x.reshape``)
call the method of a tensor whose class overrides it and asks for this
(``_functions_call_methods = True``): a DTensor's view methods work in global sizes, a
quantized tensor's ``mean``/``relu``/``clamp`` keep its quantization, and the function form
must answer as the method does. Plain tensors take the function itself."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from .._tensor import Tensor

__all__ = ["route_to_method"]


def route_to_method(fn: Callable, name: str) -> Callable:
    """``fn`` (the function ``torch.<name>``) calling ``input.<name>(...)`` instead when
    ``input``'s class asks for it and overrides that method; ``fn`` itself if Tensor has no
    method ``name``."""
    base = getattr(Tensor, name, None)
    if not callable(base):
        return fn
    try:
        first_name = next(iter(inspect.signature(fn).parameters))
    except (TypeError, ValueError, StopIteration):
        return fn

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        first = args[0] if args else kwargs.get(first_name)
        cls = type(first)
        if getattr(cls, "_functions_call_methods", False) and getattr(cls, name, base) is not base:
            if args:
                return getattr(first, name)(*args[1:], **kwargs)
            rest = {k: v for k, v in kwargs.items() if k != first_name}
            return getattr(first, name)(**rest)
        return fn(*args, **kwargs)

    return call
