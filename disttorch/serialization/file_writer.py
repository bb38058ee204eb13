"""``torch._C.PyTorchFileWriter``: write a zip checkpoint record by record, as PyTorch's C++
writer lets Python do (lit-llama's incremental saver writes each storage as it comes, then
``data.pkl``): records go under the archive folder named after the file, each stored
uncompressed and aligned to 64 bytes; ``write_end_of_file`` adds ``version`` and
``.data/serialization_id`` and closes the archive."""

from __future__ import annotations

import ctypes
import os
import zipfile
from typing import IO

from .zip_writer import _aligned_info

__all__ = ["PyTorchFileWriter"]


class PyTorchFileWriter:
    """Open ``file`` (a path or a binary file) for writing a checkpoint archive. The
    archive folder is the file's name without its extension (``"archive"`` for a buffer),
    as PyTorch names it."""

    def __init__(self, file: str | os.PathLike | IO[bytes], compute_crc32: bool = True) -> None:
        if isinstance(file, (str, os.PathLike)):
            stem = os.path.basename(os.fspath(file))
            self._archive = stem.rsplit(".", 1)[0] if "." in stem else stem
        else:
            self._archive = "archive"
        self._zip = zipfile.ZipFile(file, "w", zipfile.ZIP_STORED, allowZip64=True)
        self._written: set[str] = set()
        self._id = os.urandom(20).hex()

    def write_record(self, name: str, data: bytes | bytearray | memoryview | int, size: int) -> None:
        """Write ``size`` bytes of ``data`` (bytes, or a memory address such as a storage's
        ``data_ptr()``) as record ``name``."""
        if self._zip.fp is None:
            raise RuntimeError("PytorchStreamWriter: the archive is closed (write_end_of_file was called)")
        if name in self._written:
            raise RuntimeError(f"PytorchStreamWriter: tried to write the record {name} twice")
        payload = ctypes.string_at(data, size) if isinstance(data, int) else bytes(memoryview(data)[:size])
        full = f"{self._archive}/{name}"
        self._zip.writestr(_aligned_info(full, self._zip.fp.tell(), size), payload)
        self._written.add(name)

    def write_end_of_file(self) -> None:
        """Add the ``version`` and ``.data/serialization_id`` records and close the archive."""
        if self._zip.fp is None:
            return
        if "version" not in self._written and ".data/version" not in self._written:
            self.write_record("version", b"3\n", 2)
        self.write_record(".data/serialization_id", self._id.encode(), len(self._id))
        self._zip.close()

    def get_all_written_records(self) -> set[str]:
        return set(self._written)

    def archive_name(self) -> str:
        return self._archive

    def serialization_id(self) -> str:
        return self._id
