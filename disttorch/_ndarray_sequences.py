"""PyTorch's warning for a tensor built from a (nested) sequence holding NumPy arrays.

PyTorch copies such a sequence element by element and warns once per process that stacking
the arrays with ``numpy.array()`` first is faster; an empty result (no element stored) does
not warn. A sequence of tensors or NumPy scalars does not warn.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _native_warnings

__all__ = ["holds", "warn_if_holds_ndarrays"]

_MESSAGE = (
    "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider "
    "converting the list to a single numpy.ndarray with numpy.array() before converting to a "
    "tensor. (Triggered internally at /__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:252.)"
)


def warn_if_holds_ndarrays(data: Any, numel: int) -> None:
    """Warn (once) when the list or tuple ``data``, made into ``numel`` elements, holds an array."""
    if (
        numel == 0
        or _native_warnings.warned(_MESSAGE)
        or not isinstance(data, (list, tuple))
        or not holds(data, (np.ndarray,))
    ):
        return
    _native_warnings.warn(_MESSAGE, once=True)


_NUMBERS = frozenset((bool, int, float, complex))


def holds(seq: list | tuple, kinds: tuple) -> bool:
    """Whether the nested sequence ``seq`` holds an element of ``kinds`` (NumPy arrays, or
    arrays and scalars); a row of Python numbers, the common case, answers at one look at
    its element types."""
    types = set(map(type, seq))
    if types <= _NUMBERS:
        return False
    if any(issubclass(tp, kinds) for tp in types):
        return True
    return any(holds(x, kinds) for x in seq if isinstance(x, (list, tuple)))
