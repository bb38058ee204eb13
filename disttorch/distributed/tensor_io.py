"""Reading and writing the memory of the tensors handed to collectives.

Collectives accept ``disttorch.Tensor`` (whose NumPy array is ``t._data``) and, for teaching
examples, plain ``numpy.ndarray``. The algorithms need 1-D contiguous buffers: a contiguous
tensor is used in place through a flat view; a non-contiguous one is copied into a
contiguous buffer and the result copied back. After writing, a tensor's version counter is
bumped (``t._bump_version()``) as autograd requires of in-place changes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._public_name import package_name

__all__ = ["array_of", "Flat", "mark_written"]


def array_of(t: Any, name: str = "tensor") -> np.ndarray:
    """The NumPy array behind ``t`` (a ``disttorch.Tensor`` or ``numpy.ndarray``).

    Raises:
        TypeError: ``t`` is neither.
    """
    if isinstance(t, np.ndarray):
        return t
    data = getattr(t, "_data", None)
    if isinstance(data, np.ndarray):
        return data
    raise TypeError(f"{name} must be a {package_name()}.Tensor or a numpy.ndarray, got {type(t).__name__}")


def mark_written(t: Any) -> None:
    """Tell a tensor its memory changed in place (no-op for NumPy arrays)."""
    bump = getattr(t, "_bump_version", None)
    if bump is not None:
        bump()


class Flat:
    """A contiguous 1-D buffer for the memory of ``t``: a view if possible, else a copy.

    Args:
        t: the tensor or array.
        name: how errors name it.
        read: whether the buffer must start with ``t``'s values (``False`` for outputs).
        write: whether results will be written back to ``t`` (checks it is writeable).
    """

    def __init__(self, t: Any, name: str = "tensor", read: bool = True, write: bool = True) -> None:
        self.tensor = t
        self.array = array_of(t, name)
        if write and not self.array.flags.writeable:
            raise ValueError(f"{name} is read-only; collectives write their result into it")
        self.is_view = self.array.flags.c_contiguous
        if self.is_view:
            self.flat = self.array.reshape(-1)
        elif read:
            self.flat = np.ascontiguousarray(self.array).reshape(-1)
        else:
            self.flat = np.empty(self.array.size, self.array.dtype)

    def write_back(self) -> None:
        """Copy the buffer into ``t`` if it was a copy, and bump ``t``'s version."""
        if not self.is_view:
            np.copyto(self.array, self.flat.reshape(self.array.shape))
        mark_written(self.tensor)
