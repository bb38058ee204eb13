"""``torch.memory_format`` and its values (``contiguous_format``, ``channels_last``,
``channels_last_3d``, ``preserve_format``; ``legacy_contiguous_format`` is
``contiguous_format``), accepted wherever PyTorch takes ``memory_format=``.

Dense tensors are row-major (C order) unless asked otherwise: ``channels_last`` keeps an
``(N, C, H, W)`` tensor as an ``(N, H, W, C)`` buffer (its strides say so), and the helpers
here lay arrays out in a format, test a format and suggest one from strides, as PyTorch's.
"""

from __future__ import annotations

import numpy as np

from .kernels import threads
from .kernels.tensor_iterator import dim_order

__all__ = [
    "channels_last",
    "channels_last_3d",
    "contiguous_format",
    "legacy_contiguous_format",
    "memory_format",
    "preserve_format",
]


class memory_format:
    """A memory layout of a dense tensor, shown as ``torch.<name>``."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self) -> str:
        return self._name  # pickles as the module-level singleton


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
legacy_contiguous_format = contiguous_format


# ---------------------------------------------------------------------- physical layouts
# The dims of a tensor from slowest- to fastest-varying in memory, for each layout.
_ORDER = {"channels_last": (4, (0, 2, 3, 1)), "channels_last_3d": (5, (0, 2, 3, 4, 1))}


def _order(fmt: memory_format, ndim: int) -> tuple | None:
    """The memory order of ``fmt`` for ``ndim`` dims (None for row-major); raise as PyTorch
    when ``fmt`` needs another rank."""
    if not isinstance(fmt, memory_format):
        raise TypeError(f"memory_format must be a torch.memory_format, got {type(fmt).__name__}")
    if fmt._name not in _ORDER:
        return None
    rank, order = _ORDER[fmt._name]
    if ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")
    return order


def is_dense(arr: np.ndarray) -> bool:
    """Whether ``arr`` covers its memory without holes or overlap, in some dim order."""
    expected = arr.itemsize
    for d in sorted((d for d in range(arr.ndim) if arr.shape[d] != 1), key=lambda d: arr.strides[d]):
        if arr.strides[d] != expected:
            return False
        expected *= arr.shape[d]
    return True


def suggest_memory_format(arr: np.ndarray) -> memory_format:
    """The layout whose strides ``arr``'s strides look like (PyTorch's rule: channels-last
    when the channel dim is fastest and no size-1 ambiguity says otherwise; an empty tensor
    is row-major, so ``cat`` with an empty channels-last piece is row-major, as PyTorch's)."""
    for name, (rank, order) in _ORDER.items():
        if arr.ndim != rank or arr.strides[1] == 0:
            continue
        low, ok = 0, True
        for d in reversed(order):
            s = arr.strides[d]
            if arr.shape[d] == 0 or s == 0 or s < low or (d == 0 and low == arr.strides[1]):
                ok = False
                break
            low = s * arr.shape[d] if arr.shape[d] > 1 else s
        if ok:
            return channels_last if name == "channels_last" else channels_last_3d
    return contiguous_format


def is_contiguous_as(arr: np.ndarray, fmt: memory_format) -> bool:
    """``Tensor.is_contiguous(memory_format=fmt)``: row-major, or dense in ``fmt``'s order
    (size-1 dims ignored); a tensor of another rank is never channels-last contiguous."""
    if not isinstance(fmt, memory_format) or fmt is preserve_format:
        raise RuntimeError(f"is_contiguous: memory format {fmt} is not supported")
    if fmt._name not in _ORDER:
        return bool(arr.flags.c_contiguous)
    rank, order = _ORDER[fmt._name]
    if arr.ndim != rank:
        return False
    expected = arr.itemsize
    for d in reversed(order):
        if arr.shape[d] != 1:
            if arr.strides[d] != expected:
                return False
            expected *= arr.shape[d]
    return True


def in_format(arr: np.ndarray, fmt: memory_format | None, copy: bool = False) -> np.ndarray:
    """``arr``'s values laid out in ``fmt`` (``preserve_format``, None: dense, with the dims
    in the memory order of ``arr``'s strides); ``arr`` itself when already so and not ``copy``."""
    if fmt is None or fmt is preserve_format:
        if arr.flags.c_contiguous:
            return threads.copy(arr) if copy else arr
        if is_dense(arr):
            return np.array(arr, copy=True, order="K") if copy else arr
        # an overlapping (expanded) or holed tensor: dense in the dim order PyTorch infers
        # (``infer_dense_strides``: a channels-last expand row-major, a transposed one
        # transposed), not NumPy's ``order="K"``, which orders the dims otherwise
        out = empty_like_dense(arr, arr.dtype)
        out[...] = arr
        return out
    order = _order(fmt, arr.ndim)
    if order is None:
        return threads.copy(arr) if copy or not arr.flags.c_contiguous else arr
    out = empty_in_format(arr.shape, arr.dtype, fmt)
    if not copy and arr.strides == out.strides:  # already laid out so, size-1 dims included
        return arr
    out[...] = arr
    return out


def dense_order(arr: np.ndarray) -> list[int]:
    """The dims of ``arr`` from outermost to innermost in memory, as PyTorch infers a dense
    layout for an overlapping or holed tensor (``infer_dense_strides``): an insertion sort by
    stride, where a zero stride leaves two dims in their order and equal strides put the
    larger dim outside."""
    return dim_order(arr.shape, arr.strides)


def empty_like_dense(arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """An uninitialised array shaped as ``arr``: with its strides when ``arr`` is dense, else
    dense in the dim order :func:`dense_order` infers (PyTorch's ``preserve_format``)."""
    if is_dense(arr):
        return np.empty_like(arr, dtype=dtype, order="K")
    order = dense_order(arr)
    return np.empty(tuple(arr.shape[d] for d in order), dtype).transpose(np.argsort(order))


def empty_in_format(shape: tuple, dtype: np.dtype, fmt: memory_format | None) -> np.ndarray:
    """An uninitialised array of ``shape`` laid out in ``fmt`` (row-major when None)."""
    order = None if fmt is None else _order(fmt, len(shape))
    if order is None:
        return np.empty(shape, dtype)
    return np.empty(tuple(shape[d] for d in order), dtype).transpose(np.argsort(order))
