"""``Tensor.view(dtype)``: the same bytes read as another dtype, as PyTorch's ``view(dtype)``.

Nothing is converted and nothing is copied: the result shares the input's memory and version
counter (a write through either is seen by both). With a different element size the last
dim shrinks or grows by the ratio of the sizes, which needs that dim contiguous and the
other strides (and the offset into the buffer) to be whole multiples of the new size. The
result is not differentiable, as in PyTorch.
"""

from __future__ import annotations

import numpy as np

from .._dtype import dtype as _dtype_cls
from .._dtype import scalar_type_name
from .._storage import owning_array
from .._tensor import Tensor

__all__ = ["view_dtype"]


def _offset_in_elements(x: np.ndarray) -> int:
    """How many elements of ``x``'s dtype lie between the start of its buffer and ``x``."""
    root = owning_array(x)
    return (x.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // x.itemsize


def _check_sizes(x: np.ndarray, new: np.dtype) -> None:
    """PyTorch's checks for a view between dtypes of different element sizes."""
    old_size, new_size = x.itemsize, new.itemsize
    what = f"to view {scalar_type_name(x.dtype)} as {scalar_type_name(new)} (different element sizes)"
    if x.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    if x.shape[-1] > 1 and x.strides[-1] != old_size:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {x.strides[-1] // old_size}")
    if new_size > old_size:
        ratio = new_size // old_size
        if x.shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got {x.shape[-1]}")
        offset = _offset_in_elements(x)
        if offset % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, but got {offset}")
        for k in range(x.ndim - 1):
            stride = x.strides[k] // old_size
            if stride % ratio:
                raise RuntimeError(f"self.stride({k}) must be divisible by {ratio} {what}, but got {stride}")


def view_dtype(input: Tensor, dtype: _dtype_cls) -> Tensor:
    """``input``'s bytes as ``dtype``: same shape when the element sizes match, else the last
    dim scaled by their ratio. Shares memory and the version counter; not differentiable."""
    x = input._data
    new = dtype.numpy
    if x.itemsize != new.itemsize:
        _check_sizes(x, new)
        if x.shape[-1] <= 1:  # a last dim of size 0 or 1 may carry any stride: make it the item size
            x = np.lib.stride_tricks.as_strided(x, strides=x.strides[:-1] + (x.itemsize,))
    out = Tensor._make(x.view(new))
    out._version_box = input._version_box
    return out
