"""PyTorch's ``TypeError`` for a Python number given to a top-level function that takes
tensors only (``torch.maximum(x, 0)``: "argument 'other' (position 2) must be Tensor, not
int"), where the op itself would take the number, and for anything but a tensor as the
``input`` of a function with a Tensor method twin (``torch.exp(ndarray)``,
``torch.sum([1, 2])``). Applied where the ops are exported."""

from __future__ import annotations

import functools
import numbers
from typing import Any, Callable

import numpy as np

from .._tensor import Tensor

__all__ = ["NO_ARRAYS", "TENSOR_ONLY", "check_input", "refuse_arrays", "require_tensors"]

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

#: the functions (and Tensor methods) taking a tensor or a number, never a NumPy array, for
#: the parameters named (``torch.add(t, np.ones(2))`` is PyTorch's TypeError; ``t + array``,
#: an operator, is not and stays NumPy's)
NO_ARRAYS = {
    **dict.fromkeys(
        """
        add sub subtract mul multiply div divide true_divide floor_divide remainder fmod
        eq ne lt le gt ge greater greater_equal less less_equal not_equal
        bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift
        """.split(),
        ("input", "other"),
    ),
    "pow": ("input", "exponent"),
    "where": ("condition", "input", "other"),
    "clamp": ("input", "min", "max"),
    "clip": ("input", "min", "max"),
    **TENSOR_ONLY,
}


#: the functions whose ``input`` PyTorch's argument parser also takes as a Python number
#: (its "numbers as tensors" list: ``torch.add(2, 3)``)
_NUMBER_INPUT = frozenset(
    """
    add div divide mul multiply sub subtract true_divide floor_divide
    """.split()
)

#: the functions with an overload whose first operand is a number, the second a tensor
#: (``torch.pow(2, t)``, ``torch.bitwise_and(True, t)``, the deprecated
#: ``torch.addmm(beta, input, m1, m2)``)
_NUMBER_SELF = frozenset(
    """
    pow float_power remainder xlogy bitwise_and bitwise_or bitwise_xor
    bitwise_left_shift bitwise_right_shift addmm addbmm baddbmm addmv addr
    """.split()
)

#: functions PyTorch writes in Python, whose own errors for a non-tensor differ
_PYTHON_LEVEL = frozenset(["norm"])


def check_input(name: str, value: Any, args: tuple) -> None:
    """PyTorch's ``TypeError`` for ``value`` (not a Tensor) as the ``input`` of ``torch.<name>``;
    ``args``: the positional arguments of the call (a number ``input`` of a number-first
    overload needs a tensor second). Objects with ``__torch_function__`` pass."""
    if hasattr(type(value), "__torch_function__") or name in _PYTHON_LEVEL:
        return
    if isinstance(value, numbers.Number) and not isinstance(value, np.ndarray):
        if name in _NUMBER_INPUT:
            return
        if name in _NUMBER_SELF and len(args) > 1 and isinstance(args[1], Tensor):
            return
    raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {_type_name(value)}")


def _type_name(value: Any) -> str:
    """The name of ``value``'s type as PyTorch's parser prints it (``numpy.ndarray``, ``int``)."""
    tp = type(value)
    return tp.__name__ if tp.__module__ == "builtins" else f"{tp.__module__}.{tp.__name__}"


def require_tensors(fn: Callable, name: str, method: bool = False) -> Callable:
    """``fn``, refusing a non-tensor for the parameters ``TENSOR_ONLY[name]`` as PyTorch
    (objects with ``__torch_function__`` pass, as through PyTorch's argument parser);
    ``method``: ``fn`` bound as a Tensor method, or its in-place twin (``atan2_``), whose
    positions count after ``self``."""
    params = TENSOR_ONLY[name.rstrip("_")]
    first = 0 if method else 1

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
                    f"{name}(): argument '{param}' (position {position + first}) must be Tensor, "
                    f"not {_type_name(value)}"
                )
        return fn(*args, **kwargs)

    return tensors_only


def refuse_arrays(fn: Callable, name: str, method: bool = False) -> Callable:
    """``fn``, refusing a NumPy array for the parameters ``NO_ARRAYS[name]`` with PyTorch's
    ``TypeError``; ``method``: ``fn`` bound as a Tensor method (positions count after
    ``self``)."""
    params = NO_ARRAYS[name]

    @functools.wraps(fn)
    def no_arrays(*args: Any, **kwargs: Any) -> Any:
        for position, param in enumerate(params):
            value = args[position] if position < len(args) else kwargs.get(param)
            if isinstance(value, np.ndarray):
                raise TypeError(
                    f"{name}(): argument '{param}' (position {position + (0 if method else 1)}) must be "
                    "Tensor, not numpy.ndarray"
                )
        return fn(*args, **kwargs)

    return no_arrays
