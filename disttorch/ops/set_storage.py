"""``Tensor.set_``: make a tensor show other memory (another tensor's, or a storage's at an
offset, sizes and strides), as PyTorch's CPU build does."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .._creation import int_sizes
from .._dtype import c_type_name
from .._storage import TypedStorage, UntypedStorage
from .._tensor import Tensor
from ..autograd import grad_mode
from .as_strided import _window
from .inplace import check_inplace

__all__: list = []  # a Tensor method only

TENSOR_METHODS = ("set_",)


def _check_dtype(self: Tensor, np_dtype: np.dtype) -> None:
    if np_dtype != self._data.dtype:
        raise RuntimeError(
            f"Could not set tensor of type {c_type_name(np_dtype)} to a tensor of type {c_type_name(self._data.dtype)}"
        )


def _storage_view(self: Tensor, storage: UntypedStorage, offset: int, size: Any, stride: Any) -> np.ndarray:
    """The window of ``storage`` as elements of ``self``'s dtype; a storage too small for it is
    reallocated to fit, as PyTorch's ``set_`` resizes it (unless ``self`` has those sizes and
    strides already: then PyTorch's bounds error)."""
    dtype = self._data.dtype
    offset = int(offset)
    if size is None:
        size = ((storage.nbytes() // dtype.itemsize) - offset,)
    size = int_sizes(size)
    if stride is None:
        stride = tuple(math.prod(size[i + 1 :]) for i in range(len(size)))
    stride = int_sizes(stride)
    if len(stride) != len(size):
        raise RuntimeError(
            f"mismatch in length of strides and shape: sizes {list(size)}, strides {list(stride)}"
        )
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed * dtype.itemsize > storage.nbytes():
        if size == self._data.shape and stride == self.stride():  # PyTorch resizes only on a change
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and itemsize "
                f"{dtype.itemsize} requiring a storage size of {needed * dtype.itemsize} are out of bounds for "
                f"storage of size {storage.nbytes()}"
            )
        storage.resize_(needed * dtype.itemsize)
    raw = storage._bytes
    return _window(raw[: raw.size - raw.size % dtype.itemsize].view(dtype), (size, stride, offset))


def set_(
    self: Tensor,
    source: Any = None,
    storage_offset: int = 0,
    size: Sequence[int] | None = None,
    stride: Sequence[int] | None = None,
) -> Tensor:
    """Make this tensor show ``source``'s memory: a tensor's (its sizes and strides, or those
    given), or a storage's from ``storage_offset`` (contiguous ``size`` unless ``stride``);
    with no source, an empty tensor. The memory is shared, not copied."""
    if grad_mode._state[0] and self._rg:
        check_inplace(self)
    if source is None:
        arr = np.empty(0, dtype=self._data.dtype)
    elif isinstance(source, Tensor):
        _check_dtype(self, source._data.dtype)
        if size is None and stride is None and not storage_offset:
            arr = source._data
        else:
            storage = source.untyped_storage()  # (the source follows it if it grows)
            arr = _storage_view(self, storage, storage_offset, size if size is not None else (), stride)
    elif isinstance(source, (UntypedStorage, TypedStorage)):
        if isinstance(source, TypedStorage):
            _check_dtype(self, np.dtype(source.dtype.numpy))
            source = source._untyped_storage
        arr = _storage_view(self, source, storage_offset, size, stride)
    else:
        raise TypeError(
            f"set_() received an invalid combination of arguments - got ({type(source).__name__}), but expected "
            "one of: (), (Storage source), (Storage source, int storage_offset, tuple of ints size, tuple of "
            "ints stride), (Tensor source), (Tensor source, int storage_offset, tuple of ints size, tuple of "
            "ints stride)"
        )
    self._data = arr
    self._storage_object = None  # other memory (see _storage.untyped_storage)
    self._bump_version()
    return self
