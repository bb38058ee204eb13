"""``as_strided``: a view of a tensor's underlying memory (its storage) at any sizes, strides
and offset, as ``torch.as_strided``.

The storage is the whole buffer the tensor's array was cut from, so a slice can look at
elements before or after itself, as in PyTorch. The result shares that memory; its gradient
goes back to the input's own elements: the output's gradient is summed into a storage-sized
buffer at the positions the output reads (overlapping windows add up), and each input element
takes the sum at its own position. That map and its adjoint are the same operation with the
two position sets swapped (``Reposition``), so the gradient is differentiable again.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .._storage import owning_array
from .._tensor import Tensor
from ..autograd.function import Function

__all__ = ["as_strided"]

TENSOR_METHODS = ("as_strided",)


def _storage(x: np.ndarray) -> np.ndarray:
    """The 1-D buffer (in ``x``'s dtype) that ``x``'s memory was cut from."""
    root = owning_array(x)
    if not root.flags.c_contiguous:  # not a plain buffer: the tensor is its own storage
        return np.ascontiguousarray(x).reshape(-1)
    raw = root.reshape(-1).view(np.uint8)
    return raw[: raw.size - raw.size % x.itemsize].view(x.dtype)


def _offset(x: np.ndarray, storage: np.ndarray) -> int:
    return (x.__array_interface__["data"][0] - storage.__array_interface__["data"][0]) // x.itemsize


def _window(flat: np.ndarray, geom: tuple) -> np.ndarray:
    """The strided view ``geom`` = (sizes, strides in elements, offset) of a 1-D array."""
    size, stride, offset = geom
    strides = tuple(s * flat.itemsize for s in stride)
    try:  # a view whose base is ``flat`` (so its storage offset can be found again)
        return np.ndarray(size, flat.dtype, buffer=flat, offset=offset * flat.itemsize, strides=strides)
    except (TypeError, ValueError):  # not within ``flat`` (NumPy checks), or ``flat`` is read-only
        return np.lib.stride_tricks.as_strided(flat[offset:], size, strides)


def writable_alias(x: np.ndarray) -> np.ndarray | None:
    """A writable view of the same memory as the read-only ``x`` (an expanded view, with
    stride 0, of a writable array), or None when its memory is not writable."""
    root = x
    while getattr(root, "base", None) is not None:  # (through NumPy's as_strided wrappers too)
        root = root.base
    if not isinstance(root, np.ndarray) or not root.flags.writeable or not root.flags.c_contiguous:
        return None
    offset = x.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    try:
        return np.ndarray(x.shape, x.dtype, buffer=root, offset=offset, strides=x.strides)
    except (TypeError, ValueError):  # not within the root's buffer
        return None


def _positions(n: int, geom: tuple) -> np.ndarray:
    """Which storage element each element of the view ``geom`` reads."""
    return np.ascontiguousarray(_window(np.arange(n), geom))


class Reposition(Function):
    """Sum ``x`` into a zero buffer of ``n`` elements at ``src`` positions, read it back at
    ``dst`` positions. The adjoint is the same with ``src`` and ``dst`` swapped."""

    _raw = True

    @staticmethod
    def forward(ctx, x, src, dst, n):
        ctx.src, ctx.dst, ctx.n = src, dst, n
        buffer = np.zeros(n, dtype=x._data.dtype)
        np.add.at(buffer, src, x._data)
        return buffer[dst]

    @staticmethod
    def backward(ctx, g):
        return Reposition.apply(g, ctx.dst, ctx.src, ctx.n), None, None, None


class AsStrided(Function):
    """The view of the input's storage at ``geom``."""

    _raw = True
    _view = True

    @staticmethod
    def forward(ctx, input, geom):
        x = input._data
        storage = _storage(x)
        ctx.n, ctx.geom = storage.size, geom
        ctx.own = (x.shape, tuple(s // x.itemsize for s in x.strides), _offset(x, storage))
        return _window(storage, geom)

    @staticmethod
    def backward(ctx, g):
        read, own = _positions(ctx.n, ctx.geom), _positions(ctx.n, ctx.own)
        return Reposition.apply(g, read, own, ctx.n), None


def _check(input: Tensor, size: tuple, stride: tuple, offset: int, n: int) -> None:
    """PyTorch's errors for a geometry that is malformed or reaches outside the storage."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}"
        )
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    needed = 0 if 0 in size else offset + 1 + sum((k - 1) * s for k, s in zip(size, stride))
    item = input._data.itemsize
    if needed > n:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
            f"itemsize {item} requiring a storage size of {needed * item} are out of bounds for "
            f"storage of size {n * item}"
        )


def as_strided(
    input: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: Any = None
) -> Tensor:
    """A view of ``input``'s storage with the given ``size``, ``stride`` (in elements) and
    ``storage_offset`` (default: ``input``'s own); differentiable w.r.t. ``input``."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    x = input._data
    storage = _storage(x)
    offset = _offset(x, storage) if storage_offset is None else int(storage_offset)
    _check(input, size, stride, offset, storage.size)
    return AsStrided.apply(input, (size, stride, offset))
