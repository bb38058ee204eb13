"""PyTorch's deprecated positional overloads, which older programs still call: a number
before the tensors is the scale.

    x.add_(-lr, grad)                   x.add_(grad, alpha=-lr)
    m.addcmul_(1 - b2, grad, grad)      m.addcmul_(grad, grad, value=1 - b2)
    p.addcdiv_(-step, m, denom)         p.addcdiv_(m, denom, value=-step)
    torch.addmm(b, x, a, m1, m2)        torch.addmm(x, m1, m2, beta=b, alpha=a)
    x.addmm_(b, a, m1, m2)              x.addmm_(m1, m2, beta=b, alpha=a)

PyTorch still accepts them, with a deprecation warning; so do these wrappers, which turn
the old call into the new one. Any other call passes through unchanged.
"""

from __future__ import annotations

import functools
import numbers
import warnings
from typing import Any, Callable

from .._tensor import Tensor

__all__ = ["scale_first", "scales_first"]


def _number(x: Any) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, bool)


def _warn(name: str, old: str, new: str) -> None:
    warnings.warn(
        f"This overload of {name} is deprecated:\n\t{name}({old})\n"
        f"Consider using one of the following signatures instead:\n\t{name}({new})",
        UserWarning,
        stacklevel=3,
    )


def scale_first(keyword: str) -> Callable[[Callable], Callable]:
    """``fn(input, *tensors, keyword=s)`` also called as ``fn(input, s, *tensors)``."""

    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def call(input: Any, *args: Any, **kwargs: Any) -> Any:
            if len(args) > 1 and _number(args[0]) and all(isinstance(a, Tensor) for a in args[1:]):
                if keyword in kwargs:
                    raise TypeError(f"{fn.__name__}() got multiple values for argument '{keyword}'")
                tensors = ", ".join(["Tensor"] * (len(args) - 1))
                _warn(fn.__name__, f"Number {keyword}, {tensors}", f"{tensors}, *, Number {keyword}=1")
                return fn(input, *args[1:], **kwargs, **{keyword: args[0]})
            return fn(input, *args, **kwargs)

        return call

    return wrap


def scales_first(fn: Callable) -> Callable:
    """``fn(input, a, b, *, beta, alpha)`` (``addmm`` and its kin) also called as
    ``fn(beta, input, [alpha,] a, b)`` or, as a method, ``input.fn(beta, [alpha,] a, b)``."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if len(args) in (4, 5) and _number(args[0]) and isinstance(args[1], Tensor):
            beta, input, *rest = args  # torch.addmm(beta, input, [alpha,] a, b)
        elif len(args) in (4, 5) and isinstance(args[0], Tensor) and _number(args[1]):
            input, beta, *rest = args  # input.addmm(beta, [alpha,] a, b)
        else:
            return fn(*args, **kwargs)
        alpha = rest.pop(0) if len(rest) == 3 else 1
        if not (_number(alpha) and all(isinstance(t, Tensor) for t in rest)):
            return fn(*args, **kwargs)  # not the old overload: the usual error
        old = "Number beta, Tensor input, " + ("Number alpha, " if len(args) == 5 else "") + "Tensor, Tensor"
        _warn(fn.__name__, old, "Tensor input, Tensor, Tensor, *, Number beta=1, Number alpha=1")
        return fn(input, *rest, beta=beta, alpha=alpha, **kwargs)

    return call
