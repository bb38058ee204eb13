"""Reads PyTorch's zip checkpoint format (``torch.save``'s default since PyTorch 1.6).

Each storage record is read once, straight into its own array (or mapped copy-on-write
with ``mmap=True``) and every tensor is a strided view of it, so the memory a load uses is
bounded by the records in the file however often the pickle refers to them. Records must
be stored uncompressed, as every writer of the format stores them; a compressed record is
refused rather than inflated. Each record's CRC-32 is checked (except under ``mmap``).
"""

from __future__ import annotations

import io
import pickle
import struct
import zipfile
import zlib
from typing import Any, BinaryIO

import numpy as np

from . import names
from .unpickler import Storage, StorageType, Unpickler, place


class FormatError(RuntimeError):
    """The file is not a readable checkpoint; the message says what it is and what to do."""


#: What :mod:`zipfile` raises for a damaged entry or directory (a bad CRC or header, an
#: offset before the start of the file, a compression or encryption flag flipped on).
ZIP_DAMAGE = (zipfile.BadZipFile, OSError, ValueError, EOFError, zlib.error, RuntimeError)


def _read_record(zf: zipfile.ZipFile, name: str, what: str) -> bytes:
    """A small record (the pickle, the byte order) read whole, its damage a :class:`FormatError`."""
    try:
        return zf.read(name)
    except ZIP_DAMAGE as exc:
        raise FormatError(f"{what} is corrupt: record {name}: {exc}") from None


def _records(zf: zipfile.ZipFile, what: str) -> tuple[str, dict]:
    infos = {i.filename: i for i in zf.infolist()}
    pkl = [n for n in infos if n.endswith("data.pkl") and n.count("/") == 1]
    if len(pkl) != 1:
        raise FormatError(
            f"{what} is a zip archive but not a PyTorch checkpoint (it has no <archive>/data.pkl record)"
        )
    prefix = pkl[0][: -len("data.pkl")]
    if prefix + "constants.pkl" in infos:
        raise FormatError(
            f"{what} is a TorchScript archive (torch.jit.save), which disttorch cannot run; in "
            "PyTorch, save the model's state_dict with torch.save and load that instead"
        )
    for name, info in infos.items():
        if info.compress_type != zipfile.ZIP_STORED:
            raise FormatError(
                f"{what}: record {name} is compressed; PyTorch checkpoints store "
                "their records uncompressed. Re-save it with torch.save or "
                "disttorch.save."
            )
    return prefix, infos


def _data_offset(fh: BinaryIO, info: zipfile.ZipInfo, what: str) -> int:
    fh.seek(info.header_offset)
    header = fh.read(30)
    if len(header) != 30 or header[:4] != b"PK\x03\x04":
        raise FormatError(f"{what} is corrupt: the local header of {info.filename} is damaged")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    return info.header_offset + 30 + name_len + extra_len


def read(
    fh: BinaryIO,
    what: str,
    map_location: Any,
    weights_only: bool,
    mmap_path: str | None,
    file_size: int,
    **pickle_args: Any,
) -> Any:
    """Load the object in the zip checkpoint ``fh`` (``what`` names it in errors)."""
    try:
        zf = zipfile.ZipFile(fh)
    except ZIP_DAMAGE as exc:
        raise FormatError(
            f"{what} is a corrupt or truncated zip checkpoint ({exc}); re-save or re-download it"
        ) from None
    with zf:
        prefix, infos = _records(zf, what)
        little = True
        if prefix + "byteorder" in infos:
            order = _read_record(zf, prefix + "byteorder", what).decode("ascii", "replace").strip()
            if order not in ("little", "big"):
                raise FormatError(f"{what}: unknown byteorder record {order!r}")
            little = order == "little"
        loaded: dict[str, Storage] = {}
        budget = [file_size]  # the records of a well-formed file never overlap

        def persistent_load(pid: Any) -> Storage:
            if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
                raise pickle.UnpicklingError(f"unknown persistent id in {what}: {pid!r:.80}")
            _, stype, key, location, numel = pid
            if (
                not isinstance(stype, StorageType)
                or not isinstance(key, str)
                or not isinstance(location, str)
            ):
                raise pickle.UnpicklingError(f"{what}: malformed storage reference {pid!r:.80}")
            if key not in loaded:
                storage = _read_storage(
                    zf,
                    fh,
                    infos,
                    prefix + "data/" + key,
                    stype,
                    int(numel),
                    little,
                    what,
                    mmap_path,
                    file_size,
                )
                budget[0] -= storage.raw.nbytes
                if budget[0] < 0:
                    raise FormatError(f"{what} is malformed: its records together are larger than the file")
                loaded[key] = place(storage, location, map_location)
            return loaded[key]

        data = _read_record(zf, prefix + "data.pkl", what)
        return Unpickler(io.BytesIO(data), persistent_load, weights_only, **pickle_args).load()


def _read_storage(
    zf: zipfile.ZipFile,
    fh: BinaryIO,
    infos: dict,
    name: str,
    stype: StorageType,
    numel: int,
    little: bool,
    what: str,
    mmap_path: str | None,
    file_size: int,
) -> Storage:
    info = infos.get(name)
    if info is None:
        raise FormatError(f"{what} is corrupt: the pickle refers to a missing record {name}")
    item = names.numpy_dtype(stype.np_name).itemsize if stype.np_name else 1
    if numel < 0 or numel * item != info.file_size:
        raise FormatError(
            f"{what} is corrupt: record {name} holds {info.file_size} bytes, the "
            f"pickle says {numel} elements of {item} bytes"
        )
    offset = _data_offset(fh, info, what)
    if offset + info.file_size > file_size:
        raise FormatError(
            f"{what} is truncated or malformed: record {name} claims "
            f"{info.file_size} bytes beyond the end of the file"
        )
    if mmap_path is not None and info.file_size:
        raw = np.memmap(mmap_path, dtype=np.uint8, mode="c", offset=offset, shape=(info.file_size,))
    else:
        raw = np.empty(info.file_size, dtype=np.uint8)
        fh.seek(offset)
        view, got = memoryview(raw), 0
        while got < info.file_size:
            n = fh.readinto(view[got:])
            if not n:
                raise FormatError(f"{what} is truncated: record {name} ends early")
            got += n
        if zlib.crc32(raw) != info.CRC:
            raise FormatError(f"{what} is corrupt: record {name} fails its CRC-32 check")
    if stype.np_name is not None:
        dt = names.numpy_dtype(stype.np_name)
        raw = raw.view(dt if little else dt.newbyteorder(">"))
        if not little:
            raw = raw.astype(dt)
    return Storage(raw, stype.np_name, "cpu")
