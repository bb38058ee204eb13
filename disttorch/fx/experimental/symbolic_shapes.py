"""``torch.fx.experimental.symbolic_shapes``: the error ``torch.export`` raises when an example
input breaks its ``dynamic_shapes``, and the guard helpers code written for PyTorch's tracing
compilers calls.

disttorch has no symbolic sizes (see ``_sym.py``): every size and every condition on sizes is
a plain value, so each guard answers what PyTorch's answers for a plain value (the condition
itself), and no expression has free symbols."""

from __future__ import annotations

from typing import Any

__all__ = [
    "ConstraintViolationError",
    "GuardOnDataDependentSymNode",
    "free_symbols",
    "free_unbacked_symbols",
    "guard_or_false",
    "guard_or_true",
    "has_free_symbols",
    "is_concrete_int",
    "statically_known_true",
]


class ConstraintViolationError(RuntimeError):
    """An example input's size outside the range its ``Dim`` allows."""


class GuardOnDataDependentSymNode(RuntimeError):
    """PyTorch's error for a branch on a value known only at run time (never raised here: no
    value is symbolic)."""


def _plain_bool(a: Any) -> bool:
    if not isinstance(a, bool):
        raise AssertionError(f"Expected bool, got {type(a)}")
    return a


def guard_or_false(a: bool) -> bool:
    """``a``, a plain condition being always decidable (a bool, as PyTorch's asks)."""
    return _plain_bool(a)


def guard_or_true(a: bool) -> bool:
    """``a``, a plain condition being always decidable (a bool, as PyTorch's asks)."""
    return _plain_bool(a)


def statically_known_true(a: bool) -> bool:
    """``a``, a plain condition being known (a bool, as PyTorch's asks)."""
    return _plain_bool(a)


def is_concrete_int(a: int) -> bool:
    """True: every integer size here is a plain int (another type is refused as PyTorch's)."""
    if not isinstance(a, int):
        raise AssertionError(f"Expected SymInt or int, got {type(a)}")
    return True


def free_symbols(_value: Any) -> set:
    """The symbols ``_value`` depends on: none."""
    return set()


def free_unbacked_symbols(_value: Any) -> set:
    """The data-dependent symbols ``_value`` depends on: none."""
    return set()


def has_free_symbols(_value: Any) -> bool:
    """Whether ``_value`` depends on any symbol: never."""
    return False
