"""``Parameter`` (a tensor a Module trains) and ``Buffer`` (a tensor a Module keeps as
state but does not train, e.g. running statistics).

Assigning either to a Module attribute registers it: ``self.w = nn.Parameter(t)`` adds
``w`` to ``parameters()`` and ``state_dict()``; ``self.s = nn.Buffer(t)`` adds ``s`` to
``buffers()`` (and to ``state_dict()`` unless ``persistent=False``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor

__all__ = ["Parameter", "Buffer"]


def _array_of(data: Any) -> tuple:
    """The array and version counter a Parameter/Buffer built from ``data`` shares."""
    if data is None:
        return np.empty(0, dtype=_dtype.get_default_dtype().numpy), [0]
    if not isinstance(data, Tensor):
        raise TypeError(f"expected a Tensor as data, but got {type(data).__name__}")
    return data._data, data._version_box


class Parameter(Tensor):
    """A tensor that is a module parameter.

    Shares memory with ``data``; it is a leaf and requires grad unless told otherwise.

    Args:
        data (Tensor, optional): parameter values (an empty tensor when omitted).
        requires_grad (bool): whether the parameter requires gradient. Default: ``True``.
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> "Parameter":
        arr, version = _array_of(data)
        self = object.__new__(cls)
        Tensor._init_state(self, arr)
        self._version_box = version
        if requires_grad:
            self.requires_grad_(True)
        return self

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol: int):
        return (_rebuild_parameter, (np.ascontiguousarray(self._data).reshape(self._data.shape),
                                     self._rg, dict(self.__dict__)))


def _rebuild_parameter(arr: np.ndarray, requires_grad: bool, state: dict) -> Parameter:
    p = Parameter(Tensor._make(arr), requires_grad)
    p.__dict__.update(state)
    return p


class _BufferMeta(type):
    """``isinstance(t, Buffer)`` is true for tensors made by ``Buffer(...)``."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and getattr(obj, "_is_buffer", False)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor as a module buffer when assigned to a Module attribute.

    ``Buffer(data)`` returns a tensor sharing ``data``'s memory, tagged so that
    ``module.name = Buffer(data)`` calls ``register_buffer(name, data, persistent)``.

    Args:
        data (Tensor, optional): buffer values (an empty tensor when omitted).
        persistent (bool): whether the buffer is part of ``state_dict()``. Default: ``True``.
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Tensor:
        arr, version = _array_of(data)
        t = Tensor._make(arr)
        t._version_box = version
        t._rg = bool(data is not None and data._rg and data.grad_fn is None)
        t.persistent = persistent
        t._is_buffer = True
        return t
