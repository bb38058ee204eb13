"""The array that owns the memory a NumPy view lies in (a tensor's storage is that memory),
that memory as bytes, and its copy by ``copy.deepcopy``."""

from __future__ import annotations

import numpy as np

__all__ = ["copy_memory", "memory_layout", "owning_array", "root_bytes", "window"]


def owning_array(arr: np.ndarray) -> np.ndarray:
    """The array whose memory ``arr`` views (``arr`` itself when it owns its memory, or when
    that belongs to another object than an array, such as a shared segment: its ``base``).
    The chain goes through the interface holders ``np.lib.stride_tricks.as_strided`` puts
    between a view and its base (expand, unfold, loaded views)."""
    while True:
        base = arr.base
        if not isinstance(base, np.ndarray) and hasattr(base, "__array_interface__"):
            base = getattr(base, "base", None)
        if not isinstance(base, np.ndarray):
            return arr
        arr = base


def root_bytes(arr: np.ndarray) -> np.ndarray:
    """The bytes of the memory ``arr`` lies in (1-D uint8, shared with ``arr``): the buffer of
    the array that owns it, or ``arr``'s own span when that owner is not one dense block."""
    root = owning_array(arr)
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        root = arr if arr.flags.c_contiguous or arr.flags.f_contiguous else _span(arr)
    return root.reshape(-1, order="A").view(np.uint8)


def _span(arr: np.ndarray) -> np.ndarray:
    """The bytes from ``arr``'s lowest to its highest address, as one 1-D uint8 view."""
    if arr.size == 0:
        return np.zeros(0, dtype=np.uint8)
    extent = sum(abs(s) * (n - 1) for s, n in zip(arr.strides, arr.shape)) + arr.itemsize
    lowest = arr[tuple(slice(n - 1, n) if s < 0 else slice(0, 1) for s, n in zip(arr.strides, arr.shape))]
    first = lowest.reshape(-1).view(np.uint8)
    return np.lib.stride_tricks.as_strided(first, shape=(extent,), strides=(1,))


def memory_layout(arr: np.ndarray) -> tuple[np.ndarray, tuple]:
    """The bytes of the memory ``arr`` lies in and where ``arr`` lies in them (its array type,
    dtype, shape, strides and byte offset): what :func:`window` rebuilds ``arr`` from."""
    raw = root_bytes(arr)
    offset = arr.__array_interface__["data"][0] - raw.__array_interface__["data"][0]
    return raw, (type(arr), arr.dtype, arr.shape, arr.strides, offset)


def window(raw: np.ndarray, layout: tuple) -> np.ndarray:
    """The array ``layout`` (from :func:`memory_layout`) places in the bytes ``raw``, sharing them."""
    kind, dtype, shape, strides, offset = layout
    out = np.ndarray(shape, dtype, buffer=raw, offset=offset, strides=strides)
    return out if kind is np.ndarray else out.view(kind)


def copy_memory(arr: np.ndarray, memo: dict) -> np.ndarray:
    """``arr`` over a copy of the whole memory it lies in, at the same offset and strides: what
    ``copy.deepcopy`` gives a tensor in PyTorch. The memory is copied once per ``memo`` (the
    deep copy's memo, under the key ``"torch"`` as in PyTorch), so tensors that shared memory
    share its copy; the entry keeps the original alive, so its address names it meanwhile."""
    raw, layout = memory_layout(arr)
    key = (raw.__array_interface__["data"][0], raw.size)
    copies = memo.setdefault("torch", {})
    if key not in copies:
        copies[key] = (raw, raw.copy())
    return window(copies[key][1], layout)
