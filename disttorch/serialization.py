"""``save`` and ``load``: checkpoints of nested dicts/lists of tensors, numbers and strings.

File layout (all little-endian)::

    b"DTCK" | version u32 | pickle length u64 | pickle bytes | array bytes ... | sha256 (32 B)

The pickle holds the structure with every tensor replaced by a reference (dtype, shape,
offset); the raw array bytes follow it. Loading checks the magic, the lengths and the
SHA-256 of everything before it, so a truncated or corrupt file raises ``RuntimeError``
naming the problem, and by default (``weights_only=True``) the unpickler accepts only
plain containers, numbers, strings, dtypes and tensors, so a file can never run code.
Saving to a path is atomic: the data go to a temporary file in the same folder, are
flushed to disk, and the file is renamed over the target, so a crash never leaves a
half-written checkpoint under the target's name.
"""
from __future__ import annotations

import collections
import hashlib
import io
import os
import pickle
import struct
import tempfile
from typing import Any, BinaryIO

import numpy as np

from . import _dtype
from ._tensor import Tensor

__all__ = ["save", "load"]

_MAGIC = b"DTCK"
_VERSION = 1
_HEADER = struct.Struct("<4sIQ")
_SAFE_GLOBALS = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("builtins", "set"): set, ("builtins", "frozenset"): frozenset,
    ("builtins", "slice"): slice, ("builtins", "complex"): complex,
}


class _Saver(pickle.Pickler):
    """Pickles the structure; tensors and arrays go to ``blobs`` as raw bytes."""

    def __init__(self, f: BinaryIO) -> None:
        super().__init__(f, protocol=4)
        self.blobs: list[bytes] = []
        self.offset = 0

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            kind = "parameter" if type(obj).__name__ == "Parameter" else "tensor"
            return (kind, *self._blob(obj._data), bool(obj.requires_grad and obj.is_leaf))
        if isinstance(obj, np.ndarray) and obj.dtype.kind in "biuf":
            return ("ndarray", *self._blob(obj), False)
        if isinstance(obj, _dtype.dtype):
            return ("dtype", obj.name)
        return None

    def _blob(self, arr: np.ndarray) -> tuple:
        data = np.ascontiguousarray(arr).tobytes()
        code = arr.dtype.name if arr.dtype.kind == "V" else arr.dtype.str  # bfloat16 by name
        ref = (code, tuple(arr.shape), self.offset, len(data))
        self.blobs.append(data)
        self.offset += len(data)
        return ref


class _Loader(pickle.Unpickler):
    """Rebuilds tensors from the array section; with ``weights_only`` refuses any global
    that is not a plain container."""

    def __init__(self, f: BinaryIO, arrays: memoryview, weights_only: bool) -> None:
        super().__init__(f)
        self.arrays, self.weights_only = arrays, weights_only

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _SAFE_GLOBALS:
            return _SAFE_GLOBALS[(module, name)]
        if self.weights_only:
            raise pickle.UnpicklingError(
                f"Weights only load failed: the file refers to {module}.{name}, which is not a "
                "tensor, number, string or container. Pass weights_only=False only if you trust "
                "the file's source: it can run arbitrary code.")
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:
        if pid[0] == "dtype":
            return _dtype._by_name(pid[1])
        kind, dt, shape, offset, nbytes, requires_grad = pid
        if offset < 0 or offset + nbytes > len(self.arrays):
            raise RuntimeError("checkpoint is corrupt: a tensor's data lies outside the file")
        npd = _dtype.bfloat16.numpy if dt == "bfloat16" else np.dtype(dt)
        arr = np.frombuffer(self.arrays[offset:offset + nbytes], dtype=npd).reshape(shape).copy()
        if kind == "ndarray":
            return arr
        t = Tensor._make(arr)
        if kind == "parameter":
            from .nn.parameter import Parameter
            return Parameter(t, requires_grad=requires_grad)
        t._rg = requires_grad
        return t


def _serialize(obj: Any) -> bytes:
    buf = io.BytesIO()
    saver = _Saver(buf)
    saver.dump(obj)
    structure = buf.getvalue()
    out = io.BytesIO()
    out.write(_HEADER.pack(_MAGIC, _VERSION, len(structure)))
    out.write(structure)
    for blob in saver.blobs:
        out.write(blob)
    payload = out.getvalue()
    return payload + hashlib.sha256(payload).digest()


def save(obj: Any, f: str | os.PathLike | BinaryIO) -> None:
    """Write ``obj`` (nested dicts/lists/tuples of tensors, numbers, strings) to ``f``.

    ``f`` is a path (written atomically) or a writable binary file object.
    """
    data = _serialize(obj)
    if hasattr(f, "write"):
        f.write(data)
        return
    path = os.fspath(f)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-" + os.path.basename(path) + "-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


def load(f: str | os.PathLike | BinaryIO, map_location: Any = None, *,
         weights_only: bool = True) -> Any:
    """Read an object written by ``save``.

    Raises RuntimeError for a file that is not a disttorch checkpoint, is truncated, or
    whose checksum does not match. ``map_location`` is accepted for compatibility (all
    tensors load on the CPU).
    """
    if hasattr(f, "read"):
        data = f.read()
        name = getattr(f, "name", "<file object>")
    else:
        name = os.fspath(f)
        with open(name, "rb") as fh:
            data = fh.read()
    if len(data) < _HEADER.size + 32 or data[:4] != _MAGIC:
        raise RuntimeError(f"{name} is not a disttorch checkpoint (bad magic or too short: "
                           f"{len(data)} bytes)")
    magic, version, n_struct = _HEADER.unpack_from(data)
    if version != _VERSION:
        raise RuntimeError(f"{name}: unsupported checkpoint version {version} (expected {_VERSION})")
    payload, digest = data[:-32], data[-32:]
    if hashlib.sha256(payload).digest() != digest:
        raise RuntimeError(f"{name} is corrupt or truncated: its checksum does not match "
                           f"({len(data)} bytes read)")
    start = _HEADER.size
    if start + n_struct > len(payload):
        raise RuntimeError(f"{name} is corrupt: structure length {n_struct} exceeds the file")
    structure = payload[start:start + n_struct]
    arrays = memoryview(payload)[start + n_struct:]
    return _Loader(io.BytesIO(structure), arrays, weights_only).load()
