"""The archive ``torch.jit.save`` writes in disttorch, and its reader.

disttorch has no TorchScript: a script module runs its module's Python (``jit/_script_module.py``),
so its archive keeps that module as a pickle made by cloudpickle, which writes classes
defined in ``__main__`` (or anywhere not importable) by value, and importable ones by name.
A program can thus load an archive without the model's source, as with TorchScript, as
long as the modules its classes import are installed. The zip holds::

    <name>/disttorch_script.pkl     the module (cloudpickle)
    <name>/version                  the archive's format version
    <name>/extra/<file>             the ``_extra_files`` given to ``save``

Reading one unpickles it, which can run code from the file: load only archives you trust
(PyTorch's ``torch.load`` refuses a TorchScript archive under ``weights_only=True`` for the
same reason, and so does disttorch's).
"""

from __future__ import annotations

import io
import os
import zipfile
from typing import Any, BinaryIO

import cloudpickle

from .._atomic_file import atomic_write

__all__ = ["RECORD", "is_script_archive", "read", "write"]

#: the record that makes a zip a disttorch script archive
RECORD = "disttorch_script.pkl"
_VERSION = b"1\n"
_PREFIX = "archive/"


def is_script_archive(names: list[str]) -> bool:
    """Whether a zip with these record names is a disttorch script archive."""
    return any(name.count("/") == 1 and name.endswith("/" + RECORD) for name in names)


def write(module: Any, f: str | os.PathLike | BinaryIO, extra_files: dict | None = None) -> None:
    """Write ``module`` (a plain ``nn.Module``) and ``extra_files`` (name -> str or bytes)
    to ``f``, a path (written atomically) or a writable binary file."""
    blob = cloudpickle.dumps(module)
    records = [(RECORD, blob), ("version", _VERSION)]
    for name, content in (extra_files or {}).items():
        records.append((f"extra/{name}", content.encode() if isinstance(content, str) else bytes(content)))

    def put(out: BinaryIO) -> None:
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
            for name, data in records:
                zf.writestr(_PREFIX + name, data)

    if hasattr(f, "write"):
        put(f)
    else:
        atomic_write(os.fsdecode(os.fspath(f)), put)


def read(f: str | os.PathLike | BinaryIO, extra_files: dict | None = None) -> Any:
    """The module in the archive ``f``; fill ``extra_files`` (name -> anything) with the
    bytes of the extra files of those names (``b""`` for one the archive lacks)."""
    what = str(getattr(f, "name", "the file object")) if hasattr(f, "read") else os.fsdecode(os.fspath(f))
    if hasattr(f, "read"):
        data = f.read()
    else:
        with open(what, "rb") as fh:
            data = fh.read()
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise RuntimeError(_not_an_archive(what)) from None
    with zf:
        names = zf.namelist()
        if not is_script_archive(names):
            raise RuntimeError(_not_an_archive(what, names))
        prefix = next(n for n in names if n.endswith("/" + RECORD))[: -len(RECORD)]
        for name in extra_files or {}:
            record = f"{prefix}extra/{name}"
            extra_files[name] = zf.read(record) if record in names else b""
        return cloudpickle.loads(zf.read(prefix + RECORD))


def _not_an_archive(what: str, names: list[str] | None = None) -> str:
    """Say what a file given to ``torch.jit.load`` is instead, and what to do."""
    if names is None:
        return f"{what} is not a zip archive: torch.jit.load reads what torch.jit.save wrote"
    if any(n.endswith("/constants.pkl") for n in names):
        return (
            f"{what} is a PyTorch TorchScript archive, which disttorch cannot run (it has no "
            "TorchScript interpreter); save the model's state_dict with torch.save in PyTorch "
            "and load it into the same model class here"
        )
    if any(n.endswith("/data.pkl") for n in names):
        return f"{what} is a torch.save checkpoint, not a torch.jit.save archive: load it with torch.load"
    return f"{what} is a zip archive but not a torch.jit.save archive (it has no <archive>/{RECORD} record)"
