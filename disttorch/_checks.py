"""``torch._check`` and its family: assertions that PyTorch's compiler reads as hints, and
that libraries (transformers' ``torch_compilable_check``) call in eager code. Each raises
its error type with the message callable's text when the condition is False, with
PyTorch's messages and type checks."""

from __future__ import annotations

import builtins
from typing import Any, Callable

from ._dtype import bool as _bool
from ._tensor import Tensor

__all__ = [
    "_check",
    "_check_index",
    "_check_is_size",
    "_check_not_implemented",
    "_check_tensor_all",
    "_check_tensor_all_with",
    "_check_type",
    "_check_value",
    "_check_with",
    "_assert_async",
]

_DEFAULT_MESSAGE = (
    "Expected cond to be True, but got False. (Could this error message be improved? If so, "
    "please report an enhancement request to PyTorch.)"
)


def _check_with(error_type: type, cond: bool, message: Callable[[], Any] | None = None) -> None:
    """Raise ``error_type(message())`` (or a default message) when the bool ``cond`` is False."""
    if not isinstance(cond, builtins.bool):
        if isinstance(cond, Tensor):
            raise TypeError(
                "cond must be a bool, but got a Tensor. For tensor conditions, use "
                "torch._check_tensor_all() to assert that all elements are true."
            )
        raise TypeError(f"cond must be a bool, but got {type(cond)}")
    if cond:
        return
    if not issubclass(error_type, Exception) or issubclass(error_type, Warning):
        raise AssertionError(f"error_type must be a subclass of Exception but not Warning, got {error_type}")
    if message is None:
        raise error_type(_DEFAULT_MESSAGE)
    if not callable(message):
        raise TypeError("message must be a callable")
    raise error_type(str(message()))


def _check(cond: bool, message: Callable[[], Any] | None = None) -> None:
    """``RuntimeError`` unless ``cond``."""
    _check_with(RuntimeError, cond, message)


def _check_index(cond: bool, message: Callable[[], Any] | None = None) -> None:
    """``IndexError`` unless ``cond``."""
    _check_with(IndexError, cond, message)


def _check_value(cond: bool, message: Callable[[], Any] | None = None) -> None:
    """``ValueError`` unless ``cond``."""
    _check_with(ValueError, cond, message)


def _check_type(cond: bool, message: Callable[[], Any] | None = None) -> None:
    """``TypeError`` unless ``cond``."""
    _check_with(TypeError, cond, message)


def _check_not_implemented(cond: bool, message: Callable[[], Any] | None = None) -> None:
    """``NotImplementedError`` unless ``cond``."""
    _check_with(NotImplementedError, cond, message)


def _check_is_size(i: Any, message: Callable[[], Any] | None = None, *, max: Any = None) -> None:
    """``RuntimeError`` unless ``0 <= i`` (and ``i <= max`` when given)."""
    _check(i >= 0, message)
    if max is not None:
        _check(i <= max, message)


def _check_tensor_all_with(error_type: type, cond: Tensor, message: Callable[[], Any] | None = None) -> None:
    """Raise ``error_type`` unless every element of the bool tensor ``cond`` is True."""
    if not isinstance(cond, Tensor):
        raise TypeError(f"cond must be a tensor, but got {type(cond)}")
    if cond.dtype != _bool:
        raise TypeError(f"cond tensor must have dtype {_bool}, but got {cond.dtype}")
    _check_with(error_type, builtins.bool(cond._data.all()), message)


def _check_tensor_all(cond: Tensor, message: Callable[[], Any] | None = None) -> None:
    """``RuntimeError`` unless every element of the bool tensor ``cond`` is True."""
    _check_tensor_all_with(RuntimeError, cond, message)


def _assert_async(input: Tensor, assert_msg: str | None = None) -> None:
    """``RuntimeError`` unless the one-element tensor ``input`` is nonzero (PyTorch checks
    it asynchronously on a device; on the CPU at once)."""
    n = input.numel()
    if n != 1:
        raise RuntimeError(
            f"Boolean value of Tensor with {'no values' if n == 0 else 'more than one value'} is ambiguous"
        )
    if not input._data.reshape(()).item():
        raise RuntimeError(
            assert_msg
            if assert_msg is not None
            else "Expected Tensor with single nonzero value, but got zero"
        )
