"""Reads PyTorch's legacy checkpoint format (``torch.save(..., _use_new_zipfile_serialization=False)``).

The file is a sequence of pickles: a magic number, the protocol version 1001, a dict of
system facts, the object (storages as persistent ids ``("storage", type, key, location,
numel, view)``), the list of storage keys; then, for each key, its element count as int64
and its raw bytes. Storages are read before the object is rebuilt: a first pass over the
object's pickle only records its storage references (every other global it names becomes
an inert placeholder, so nothing is imported or called), then the storages are read, then
the object is unpickled for real through the weights-only unpickler. Each storage is
allocated once and only after checking it lies inside the file, so memory stays bounded
by the file's size.
"""

from __future__ import annotations

import io
import pickle
import struct
from typing import Any

import numpy as np

from . import names
from .unpickler import _BUILTIN, Storage, StorageType, Unpickler, check_memo_indices, place
from .zip_reader import FormatError

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001


class _Inert:
    """Stands for every global during the first pass: constructs, calls and sets nothing."""

    def __new__(cls, *args: Any, **kwargs: Any) -> _Inert:  # noqa: PYI034
        return object.__new__(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> _Inert:
        return _Inert()

    def __setstate__(self, state: Any) -> None:
        pass

    def __setitem__(self, key: Any, value: Any) -> None:
        pass

    def append(self, value: Any) -> None:
        pass

    def extend(self, values: Any) -> None:
        pass


class _Scanner(pickle.Unpickler):
    """The first pass: records ``key -> (storage type, numel, view)``."""

    def __init__(self, file: Any, **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self.refs: dict[str, tuple] = {}

    def find_class(self, module: str, name: str) -> Any:
        found = _BUILTIN.get(f"{module}.{name}")
        return found if isinstance(found, StorageType) else _Inert

    def persistent_load(self, pid: Any) -> Any:
        if isinstance(pid, tuple) and len(pid) == 6 and pid[0] == "storage":
            _, stype, key, location, numel, _view = pid
            if not isinstance(stype, StorageType) or stype.np_name is None:
                raise pickle.UnpicklingError(f"unsupported storage type in a legacy file: {pid!r:.80}")
            self.refs[str(key)] = (stype, int(numel), location)
        elif not (isinstance(pid, tuple) and pid and pid[0] == "module"):
            raise pickle.UnpicklingError(f"unknown persistent id in a legacy file: {pid!r:.80}")
        return _Inert()


def _plain(stream: io.BytesIO, what: str, **kwargs: Any) -> Any:
    """One of the small header pickles (numbers, dicts, lists of strings only)."""
    try:
        return Unpickler(stream, None, True, **kwargs).load()
    except (pickle.UnpicklingError, EOFError, ValueError) as exc:
        raise FormatError(f"{what} is not a valid legacy PyTorch checkpoint ({exc})") from None


def read(data: bytes, what: str, map_location: Any, weights_only: bool, **pickle_args: Any) -> Any:
    """Load the object in the legacy checkpoint ``data`` (``what`` names it in errors)."""
    stream = io.BytesIO(data)
    if _plain(stream, what, **pickle_args) != MAGIC_NUMBER:
        raise FormatError(
            f"{what} is a pickle file but not one torch.save or disttorch.save wrote (no checkpoint "
            "magic number); if it is a plain pickle you trust, read it with pickle.load"
        )
    version = _plain(stream, what, **pickle_args)
    if version != PROTOCOL_VERSION:
        raise FormatError(f"{what}: unsupported legacy protocol version {version!r}")
    info = _plain(stream, what, **pickle_args)
    little = not isinstance(info, dict) or info.get("little_endian", True)
    start = stream.tell()
    scanner = _Scanner(stream, **pickle_args)
    try:
        check_memo_indices(stream)
        stream.seek(start)
        scanner.load()
    except (EOFError, ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
        raise FormatError(f"{what} is a damaged legacy PyTorch checkpoint ({exc})") from None
    keys = _plain(stream, what, **pickle_args)
    if not isinstance(keys, list):
        raise FormatError(f"{what}: the storage key list is malformed")
    storages = _read_storages(data, stream.tell(), keys, scanner.refs, little, what, map_location)
    stream.seek(start)

    def persistent_load(pid: Any) -> Any:
        if pid[0] == "module":
            raise pickle.UnpicklingError(
                "the file holds a module saved with its source code, which disttorch does not load"
            )
        _, _, key, _, _, view = pid
        storage = storages[str(key)]
        if view is not None:
            _, offset, size = view
            flat = storage.raw[int(offset) : int(offset) + int(size)]
            storage = Storage(flat, storage.np_name, storage.location)
        return storage

    return Unpickler(stream, persistent_load, weights_only, **pickle_args).load()


def _read_storages(
    data: bytes, pos: int, keys: list, refs: dict, little: bool, what: str, map_location: Any
) -> dict:
    out: dict[str, Storage] = {}
    for key in keys:
        key = str(key)
        if key not in refs or key in out:
            raise FormatError(f"{what} is corrupt: storage {key!r} is not referenced exactly once")
        stype, numel, location = refs[key]
        if pos + 8 > len(data):
            raise FormatError(f"{what} is truncated: storage {key!r} is missing")
        (count,) = struct.unpack_from("<q" if little else ">q", data, pos)
        dt = names.numpy_dtype(stype.np_name)
        end = pos + 8 + count * dt.itemsize
        if count != numel or count < 0 or end > len(data):
            raise FormatError(
                f"{what} is truncated or corrupt: storage {key!r} claims {count} "
                f"elements ({numel} expected) with {len(data) - pos - 8} bytes left"
            )
        raw = np.frombuffer(
            data, dtype=dt if little else dt.newbyteorder(">"), count=count, offset=pos + 8
        ).astype(dt)
        out[key] = place(Storage(raw, stype.np_name, "cpu"), location, map_location)
        pos = end
    return out
