"""Tensor storage in shared memory, for ``Tensor.share_memory_`` and ``torch.multiprocessing``.

A shared array lives in an anonymous shared-memory file (``memfd_create`` on Linux, an
unlinked temporary file elsewhere) mapped ``MAP_SHARED``: forked children see the same
pages, and other processes map the same file from a duplicate of its descriptor (sent by
``torch.multiprocessing`` with the tensor, as PyTorch's ``file_descriptor`` strategy does).
Nothing is left behind: the file has no name, and its memory is freed when the last
process unmaps it and closes its descriptor.
"""

from __future__ import annotations

import mmap
import os
import tempfile
import weakref
from typing import NamedTuple

import numpy as np

from ._array_base import owning_array

__all__ = ["Handle", "handle_of", "open_handle", "segment_of", "share_array"]

# id(mmap) -> (descriptor, start address, length): every shared segment this process maps
_segments: dict[int, tuple[int, int, int]] = {}


class Handle(NamedTuple):
    """Where a shared array lives: its segment's descriptor and the array's layout in it."""

    fd: int
    size: int
    offset: int
    shape: tuple
    strides: tuple
    dtype: str


def _new_file(nbytes: int) -> int:
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("disttorch-shared-tensor", os.MFD_CLOEXEC)
    else:  # no memfd: an unlinked file in shared memory (or the temp dir)
        folder = "/dev/shm" if os.path.isdir("/dev/shm") else None
        with tempfile.NamedTemporaryFile(dir=folder, prefix="disttorch-shm-", delete=False) as f:
            fd = os.dup(f.fileno())
            os.unlink(f.name)
    os.ftruncate(fd, nbytes)
    return fd


def _map(fd: int, size: int) -> mmap.mmap:
    mm = mmap.mmap(fd, size)  # MAP_SHARED, read-write
    start = np.frombuffer(mm, dtype=np.uint8).ctypes.data
    _segments[id(mm)] = (fd, start, size)
    key = id(mm)

    def release(fd: int = fd, key: int = key) -> None:
        _segments.pop(key, None)
        os.close(fd)

    weakref.finalize(mm, release)
    return mm


def share_array(arr: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of ``arr`` in a new shared-memory segment."""
    size = max(arr.nbytes, 1)
    fd = _new_file(size)
    try:
        mm = _map(fd, size)
    except BaseException:
        os.close(fd)
        raise
    out = np.ndarray(arr.shape, dtype=arr.dtype, buffer=mm)
    out[...] = arr
    return out


def segment_of(arr: np.ndarray) -> mmap.mmap | None:
    """The shared segment ``arr``'s memory lies in, or None if it is private memory."""
    base = owning_array(arr).base
    if isinstance(base, mmap.mmap) and id(base) in _segments:
        return base
    return None


def handle_of(arr: np.ndarray) -> Handle:
    """The :class:`Handle` of a shared ``arr`` (ValueError if it is not shared)."""
    mm = segment_of(arr)
    if mm is None:
        raise ValueError("the array is not in shared memory (call share_memory_() first)")
    fd, start, size = _segments[id(mm)]
    return Handle(fd, size, arr.ctypes.data - start, arr.shape, arr.strides, arr.dtype.str)


def open_handle(handle: Handle, fd: int) -> np.ndarray:
    """Map the segment of ``handle`` (through ``fd``, a descriptor this process owns from now
    on) and return the array it describes, sharing memory with the sender's."""
    try:
        mm = _map(fd, handle.size)
    except BaseException:
        os.close(fd)
        raise
    return np.ndarray(
        handle.shape, dtype=np.dtype(handle.dtype), buffer=mm, offset=handle.offset, strides=handle.strides
    )
