"""``torch.autograd.Variable``: the legacy wrapper of old tutorials.

PyTorch merged ``Variable`` into ``Tensor`` long ago but kept the call: ``Variable(t)`` and
``Variable(t, requires_grad=True)`` return a new tensor (detached from ``t``'s graph) and
every tensor is an instance of ``Variable``. The engine is still reached through
``Variable._execution_engine``.
"""

from __future__ import annotations

import warnings
from typing import Any

from .._creation import empty
from .._tensor import Tensor
from .engine import queue_callback

__all__ = ["Variable"]


class _ExecutionEngine:
    """``Variable._execution_engine.queue_callback`` as in PyTorch."""

    @staticmethod
    def queue_callback(callback: Any) -> None:
        queue_callback(callback)


class _VariableMeta(type):
    """Every tensor is a ``Variable``: ``isinstance(t, Variable)`` is True, as in PyTorch."""

    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False, volatile=False)``: ``data`` detached, as a new
    tensor that requires grad when asked (``volatile`` is ignored with PyTorch's warning)."""

    _execution_engine = _ExecutionEngine()

    def __new__(
        cls, data: Tensor | None = None, requires_grad: bool = False, volatile: bool = False
    ) -> Tensor:  # type: ignore[misc]
        if volatile:
            warnings.warn(
                "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                UserWarning,
                stacklevel=2,
            )
        if data is None:
            return empty(0, requires_grad=requires_grad)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(bool(requires_grad))
