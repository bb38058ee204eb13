"""Reads disttorch's earlier checkpoint format (``DTCK``), so files saved before the switch
to PyTorch's format still load.

Layout (little-endian): ``b"DTCK" | version u32 | pickle length u64 | pickle | array bytes
| sha256 of everything before it``. The pickle refers to arrays by ``(dtype, shape, offset,
nbytes)``. The array section is copied once into one buffer and every tensor is a view of
it, so however often the pickle refers to the same bytes, a load holds the file once.

A file whose checksum matches may still have been crafted: every reference is checked
(kind, dtype, shape, and that its bytes lie inside the array section and match the shape)
before an array is made, and whatever else goes wrong while reading the pickle is reported
as one :class:`FormatError` naming the file and what is wrong. A pickle the unpickler
refuses (a global the weights-only load does not allow, an invalid opcode) stays a
``pickle.UnpicklingError``, as in every format, with the file's name added.
"""

from __future__ import annotations

import collections
import hashlib
import io
import math
import pickle
import struct
from typing import Any

import numpy as np

from .. import _dtype
from .unpickler import Unpickler, _make_tensor, rebuild_parameter
from .zip_reader import FormatError

MAGIC = b"DTCK"
_VERSION = 1
_HEADER = struct.Struct("<4sIQ")
_EXTRA = {
    "builtins.frozenset": frozenset,
    "builtins.slice": slice,
    "collections.OrderedDict": collections.OrderedDict,
}
_KINDS = ("ndarray", "tensor", "parameter")
#: The element types DTCK files were written with (NumPy dtype strings).
_ARRAY_DTYPES = frozenset(np.dtype(d).str for d in ("?", "u1", "i1", "i2", "i4", "i8", "<f2", "<f4", "<f8"))


class _Corrupt(Exception):
    """A reference in the pickle that cannot be what a DTCK writer made (message: what)."""


def read(data: bytes, what: str, weights_only: bool) -> Any:
    """Load an object from the bytes ``data`` of a DTCK file (``what`` names it in errors).

    Raises:
        FormatError: the file is truncated, fails its checksum, or is malformed (naming
            the file and what is wrong).
        pickle.UnpicklingError: the pickle names a global the weights-only load refuses.
    """
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
        if isinstance(pid, tuple) and len(pid) == 2 and pid[0] == "dtype":
            return _dtype_reference(pid[1])
        kind, arr, requires_grad = _array_reference(pid, arrays)
        if kind == "ndarray":
            return arr
        t = _make_tensor(arr, requires_grad and kind == "tensor")
        return rebuild_parameter(t, requires_grad, None) if kind == "parameter" else t

    structure = io.BytesIO(bytes(payload[start : start + n_struct]))
    try:
        return Unpickler(structure, persistent_load, weights_only, _EXTRA).load()
    except _Corrupt as exc:
        raise FormatError(f"{what} is corrupt: {exc}") from None
    except pickle.UnpicklingError as exc:  # a refused global, or a broken pickle: name the file
        raise pickle.UnpicklingError(f"{what}: {exc}") from None
    except (
        EOFError,
        ValueError,
        TypeError,
        AttributeError,
        KeyError,
        IndexError,
        OverflowError,
        RecursionError,
        struct.error,
    ) as exc:
        raise FormatError(
            f"{what} is corrupt: its structure record is malformed ({type(exc).__name__}: {exc})"
        ) from None


def _dtype_reference(name: Any) -> Any:
    try:
        return _dtype._by_name(name)
    except (KeyError, TypeError):
        raise _Corrupt(f"it refers to an unknown dtype {name!r:.60}") from None


def _array_reference(pid: Any, arrays: np.ndarray) -> tuple[str, np.ndarray, bool]:
    """Check a reference ``(kind, dtype, shape, offset, nbytes, requires_grad)`` and return
    ``(kind, array viewing the array section, requires_grad)``."""
    if not (isinstance(pid, tuple) and len(pid) == 6):
        raise _Corrupt(
            f"a reference is {pid!r:.80}, expected (kind, dtype, shape, offset, nbytes, requires_grad)"
        )
    kind, dt, shape, offset, nbytes, requires_grad = pid
    if kind not in _KINDS:
        raise _Corrupt(f"a reference has kind {kind!r:.40}, expected one of {', '.join(_KINDS)}")
    if not (isinstance(dt, str) and dt in _ARRAY_DTYPES):
        raise _Corrupt(f"a reference has element type {dt!r:.40}, expected one of {sorted(_ARRAY_DTYPES)}")
    if not (isinstance(shape, tuple) and len(shape) <= 64 and all(type(n) is int and n >= 0 for n in shape)):
        raise _Corrupt(f"a reference has shape {shape!r:.80}, expected a tuple of sizes >= 0")
    if not all(type(n) is int for n in (offset, nbytes)) or offset < 0 or nbytes < 0:
        raise _Corrupt(
            f"a reference has offset {offset!r:.40} and size {nbytes!r:.40}, expected integers >= 0"
        )
    itemsize = np.dtype(dt).itemsize
    if math.prod(shape) * itemsize != nbytes:
        raise _Corrupt(f"a reference of shape {shape} and element type {dt} claims {nbytes} bytes")
    if offset + nbytes > arrays.size:
        raise _Corrupt(
            f"a tensor's data ({nbytes} bytes at offset {offset}) lies outside the file's "
            f"{arrays.size} bytes of array data"
        )
    if type(requires_grad) is not bool:
        raise _Corrupt(f"a reference has requires_grad={requires_grad!r:.40}, expected True or False")
    if requires_grad and kind != "ndarray" and np.dtype(dt).kind != "f":
        raise _Corrupt(f"a {kind} of element type {dt} requires grad; only floating-point ones can")
    return kind, arrays[offset : offset + nbytes].view(dt).reshape(shape), requires_grad
