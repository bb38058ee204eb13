"""PyTorch's overloads whose first operand is a number named ``self``
(``torch.pow(self=2, exponent=t)``, ``torch.xlogy(self=2, other=t)``): the wrapper passes
that number on as the function's first argument."""

from __future__ import annotations

import functools
import numbers
from typing import Any, Callable

__all__ = ["number_self"]


def number_self(fn: Callable) -> Callable:
    """``fn(input, ...)`` also called as ``fn(self=number, ...)``; a non-number ``self`` is
    PyTorch's TypeError (a tensor goes as ``input``)."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if "self" not in kwargs:
            return fn(*args, **kwargs)
        value = kwargs.pop("self")
        if args or "input" in kwargs:
            raise TypeError(f"{fn.__name__}() got multiple values for argument 'self'")
        if not isinstance(value, numbers.Number):
            raise TypeError(
                f"{fn.__name__}(): argument 'self' must be a number, not {type(value).__name__} "
                "(a tensor goes as 'input')"
            )
        return fn(value, **kwargs)

    return call
