"""PyTorch's ``TypeError`` for a Python number given to a top-level function that takes
tensors only (``torch.maximum(x, 0)``: "argument 'other' (position 2) must be Tensor, not
int"), where the op itself would take the number. Applied where the ops are exported."""

from __future__ import annotations

import functools
from typing import Any, Callable

from .._tensor import Tensor

__all__ = ["TENSOR_ONLY", "require_tensors"]

#: the functions, and the names of their leading parameters that must be tensors
TENSOR_ONLY = {
    **dict.fromkeys(
        """
        maximum minimum fmax fmin atan2 arctan2 hypot logaddexp logaddexp2 nextafter ldexp gcd lcm
        logical_and logical_or logical_xor igamma igammac dist isclose
        """.split(),
        ("input", "other"),
    ),
    "heaviside": ("input", "values"),
    "polar": ("abs", "angle"),
    "complex": ("real", "imag"),
}


def require_tensors(fn: Callable, name: str) -> Callable:
    """``fn``, refusing a non-tensor for the parameters ``TENSOR_ONLY[name]`` as PyTorch
    (objects with ``__torch_function__`` pass, as through PyTorch's argument parser)."""
    params = TENSOR_ONLY[name]

    @functools.wraps(fn)
    def tensors_only(*args: Any, **kwargs: Any) -> Any:
        for position, param in enumerate(params):
            value = args[position] if position < len(args) else kwargs.get(param, ...)
            if (
                value is not ...
                and not isinstance(value, Tensor)
                and not hasattr(type(value), "__torch_function__")
            ):
                raise TypeError(
                    f"{name}(): argument '{param}' (position {position + 1}) must be Tensor, not {type(value).__name__}"
                )
        return fn(*args, **kwargs)

    return tensors_only
