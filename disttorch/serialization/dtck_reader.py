"""Reads disttorch's earlier checkpoint format (``DTCK``), so files saved before the switch
to PyTorch's format still load.

Layout (little-endian): ``b"DTCK" | version u32 | pickle length u64 | pickle | array bytes
| sha256 of everything before it``. The pickle refers to arrays by ``(dtype, shape, offset,
nbytes)``. The array section is copied once into one buffer and every tensor is a view of
it, so however often the pickle refers to the same bytes, a load holds the file once.
"""

from __future__ import annotations

import collections
import hashlib
import io
import pickle
import struct
from typing import Any

import numpy as np

from .. import _dtype
from .unpickler import Unpickler, rebuild_parameter
from .zip_reader import FormatError

MAGIC = b"DTCK"
_VERSION = 1
_HEADER = struct.Struct("<4sIQ")
_EXTRA = {
    "builtins.frozenset": frozenset,
    "builtins.slice": slice,
    "collections.OrderedDict": collections.OrderedDict,
}


def read(data: bytes, what: str, weights_only: bool) -> Any:
    """Load an object from the bytes ``data`` of a DTCK file (``what`` names it in errors)."""
    if len(data) < _HEADER.size + 32:
        raise FormatError(f"{what} is a truncated disttorch checkpoint ({len(data)} bytes)")
    _, version, n_struct = _HEADER.unpack_from(data)
    if version != _VERSION:
        raise FormatError(f"{what}: unsupported disttorch checkpoint version {version} (expected {_VERSION})")
    payload, digest = memoryview(data)[:-32], data[-32:]
    if hashlib.sha256(payload).digest() != digest:
        raise FormatError(
            f"{what} is corrupt or truncated: its checksum does not match ({len(data)} bytes read)"
        )
    start = _HEADER.size
    if start + n_struct > len(payload):
        raise FormatError(f"{what} is corrupt: structure length {n_struct} exceeds the file")
    arrays = np.frombuffer(bytearray(payload[start + n_struct :]), dtype=np.uint8)

    def persistent_load(pid: Any) -> Any:
        if pid[0] == "dtype":
            return _dtype._by_name(pid[1])
        kind, dt, shape, offset, nbytes, requires_grad = pid
        dt = np.dtype(dt)
        if dt.kind not in "biuf" or offset < 0 or nbytes < 0 or offset + nbytes > arrays.size:
            raise pickle.UnpicklingError(f"{what} is corrupt: a tensor's data lies outside the file")
        arr = arrays[offset : offset + nbytes].view(dt).reshape(shape)
        if kind == "ndarray":
            return arr
        from .unpickler import _make_tensor

        t = _make_tensor(arr, requires_grad and kind == "tensor")
        return rebuild_parameter(t, requires_grad, None) if kind == "parameter" else t

    structure = io.BytesIO(bytes(payload[start : start + n_struct]))
    return Unpickler(structure, persistent_load, weights_only, _EXTRA).load()
