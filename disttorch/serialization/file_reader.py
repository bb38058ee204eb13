"""``torch.PyTorchFileReader``: the records of a zip checkpoint by name, as PyTorch's C++
reader gives them to Python (Lightning reads checkpoints lazily through it)."""

from __future__ import annotations

import os
import zipfile
from typing import IO, Any

import numpy as np

from .._dtype import dtype as _dtype_cls
from .._tensor import Tensor

__all__ = ["PyTorchFileReader"]


class PyTorchFileReader:
    """Open a zip checkpoint (a path or a binary file) and read its records: names are
    relative to the archive folder (``"data.pkl"``, ``"data/0"``, ``"byteorder"``)."""

    def __init__(self, file: str | os.PathLike | IO[bytes]) -> None:
        self._zip = zipfile.ZipFile(file)
        first = self._zip.namelist()[0] if self._zip.namelist() else ""
        if "/" not in first:
            raise RuntimeError(
                f"PytorchStreamReader failed locating file: {file!r} is not a checkpoint archive"
            )
        self._prefix = first.split("/", 1)[0] + "/"

    def get_all_records(self) -> list[str]:
        return [n[len(self._prefix) :] for n in self._zip.namelist() if n.startswith(self._prefix)]

    def has_record(self, name: str) -> bool:
        return self._prefix + name in self._zip.NameToInfo

    def get_record(self, name: str) -> bytes:
        """The bytes of record ``name``."""
        if not self.has_record(name):
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        return self._zip.read(self._prefix + name)

    def get_storage_from_record(self, name: str, numel: int, dtype: Any) -> Tensor:
        """Record ``name`` as a 1-D tensor of ``numel`` elements of ``dtype`` (bytes when
        ``dtype`` is not a dtype, e.g. ``UntypedStorage``)."""
        np_dtype = dtype.numpy if isinstance(dtype, _dtype_cls) else np.uint8
        data = np.frombuffer(bytearray(self.get_record(name)), dtype=np_dtype)
        if data.size < numel:
            raise RuntimeError(f"record {name} holds {data.size} elements, fewer than the {numel} asked for")
        return Tensor._make(data[:numel])

    def serialization_id(self) -> str:
        return (
            self.get_record(".data/serialization_id").decode()
            if self.has_record(".data/serialization_id")
            else ""
        )
