"""The archives ``torch.jit.save`` and ``torch.export.save`` write in disttorch, and their reader.

disttorch has no TorchScript and no ATen graphs: a script module runs its module's Python
(``jit/_script_module.py``) and an exported program is a ``torch.fx`` graph of the
module's calls (``export.py``). Their archives keep that object as a pickle made by
cloudpickle, which writes classes defined in ``__main__`` (or anywhere not importable) by
value and importable ones by name, so a program can load an archive without the model's
source, as with PyTorch's archives, as long as the modules its classes import are
installed. The zip holds::

    <name>/<record>                 the object (cloudpickle); the record names the kind:
                                    disttorch_script.pkl, disttorch_exported_program.pkl
    <name>/version                  the archive's format version
    <name>/extra/<file>             the extra files given to ``save``
    <name>/signature                an HMAC of the records above (``_archive_key.py``)

Reading one unpickles it, which can run code from the file, so ``read`` first checks the
signature against this user's archive key and refuses an archive it does not sign (another
user's or machine's, a crafted file) unless ``DISTTORCH_TRUST_ARCHIVES=1``. (PyTorch's
``torch.load`` refuses a TorchScript archive under ``weights_only=True``, and so does
disttorch's; with ``weights_only=False`` it runs the pickle, as PyTorch's runs any.)
"""

from __future__ import annotations

import io
import os
import pickle
import zipfile
from typing import Any, BinaryIO

from . import _archive_key
from ._atomic_file import atomic_write

__all__ = ["EXPORTED_PROGRAM", "SCRIPT_MODULE", "kind_of", "read", "write"]

#: the records that make a zip an archive of each kind
SCRIPT_MODULE = "disttorch_script.pkl"
EXPORTED_PROGRAM = "disttorch_exported_program.pkl"
_READERS = {SCRIPT_MODULE: "torch.jit.load", EXPORTED_PROGRAM: "torch.export.load"}
_WRITERS = {SCRIPT_MODULE: "torch.jit.save", EXPORTED_PROGRAM: "torch.export.save"}
_VERSION = b"1\n"
_PREFIX = "archive/"
_SIGNATURE = "signature"

FileLike = str | os.PathLike | BinaryIO


def kind_of(names: list[str]) -> str | None:
    """The record naming the kind of the archive whose zip has these entries, or None."""
    for name in names:
        if name.count("/") == 1 and name.split("/")[1] in _READERS:
            return name.split("/")[1]
    return None


def write(obj: Any, f: FileLike, record: str, extra_files: dict | None = None) -> None:
    """Write ``obj`` as the archive kind ``record``, with ``extra_files`` (name -> str or
    bytes), to ``f``: a path (written atomically) or a writable binary file."""
    import cloudpickle  # (loaded when an archive is written: not at ``import disttorch``)

    records = [(record, cloudpickle.dumps(obj)), ("version", _VERSION)]
    for name, content in (extra_files or {}).items():
        records.append((f"extra/{name}", content.encode() if isinstance(content, str) else bytes(content)))
    records.append((_SIGNATURE, _archive_key.sign(records)))

    def put(out: BinaryIO) -> None:
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
            for name, data in records:
                zf.writestr(_PREFIX + name, data)

    if hasattr(f, "write"):
        put(f)
    else:
        atomic_write(os.fsdecode(os.fspath(f)), put)


def read(f: FileLike, record: str, extra_files: dict | None = None) -> Any:
    """The object in the archive ``f`` of the kind ``record``; fill ``extra_files`` (name ->
    anything) with the bytes of the extra files of those names (``b""`` for one it lacks)."""
    what = str(getattr(f, "name", "the file object")) if hasattr(f, "read") else os.fsdecode(os.fspath(f))
    if hasattr(f, "read"):
        data = f.read()
    else:
        with open(what, "rb") as fh:
            data = fh.read()
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise RuntimeError(
            f"{what} is not a zip archive: {_READERS[record]} reads what {_WRITERS[record]} wrote"
        ) from None
    with zf:
        names = zf.namelist()
        if kind_of(names) != record:
            raise RuntimeError(_not_this_kind(what, names, record))
        prefix = next(n for n in names if n.endswith("/" + record))[: -len(record)]
        if not _archive_key.trusted_without_signature():
            _check_signature(zf, prefix, what)
        for name in extra_files or {}:
            entry = f"{prefix}extra/{name}"
            extra_files[name] = zf.read(entry) if entry in names else b""
        return pickle.loads(zf.read(prefix + record))  # (cloudpickle's pickles are plain pickles)


def _check_signature(zf: zipfile.ZipFile, prefix: str, what: str) -> None:
    """Raise unless the archive's records carry this user's signature (see ``_archive_key``)."""
    records, signature = [], None
    for name in zf.namelist():
        if name.startswith(prefix):
            if name[len(prefix) :] == _SIGNATURE:
                signature = zf.read(name)
            else:
                records.append((name[len(prefix) :], zf.read(name)))
    if not _archive_key.verify(records, signature):
        raise RuntimeError(
            f"{what} was not written by this user's disttorch with the archive key {_archive_key.key_path()} "
            f"({'its signature does not match' if signature else 'it has no signature'}): its model is a "
            "Python pickle, which runs code when loaded. If you trust the file as you would trust a "
            f"program, load it with {_archive_key.TRUST_ENV}=1, or give this machine the key file of "
            "the one that wrote it"
        )


def _not_this_kind(what: str, names: list[str], record: str) -> str:
    """Say what a file given to the reader of ``record`` archives is instead, and what to do."""
    reader, other = _READERS[record], kind_of(names)
    if other is not None:
        return f"{what} was written by {_WRITERS[other]}: read it with {_READERS[other]}, not {reader}"
    if any(n.endswith("/constants.pkl") for n in names):
        return (
            f"{what} is a PyTorch TorchScript archive, which disttorch cannot run (it has no "
            "TorchScript interpreter); save the model's state_dict with torch.save in PyTorch "
            "and load it into the same model class here"
        )
    if any(n.endswith(".json") and "/models/" in n for n in names):
        return (
            f"{what} is a PyTorch exported program (.pt2), which disttorch cannot run (it has no "
            "ATen graphs); save the model's state_dict with torch.save in PyTorch instead"
        )
    if any(n.endswith("/data.pkl") for n in names):
        return f"{what} is a torch.save checkpoint, not a {_WRITERS[record]} archive: load it with torch.load"
    return (
        f"{what} is a zip archive but not a {_WRITERS[record]} archive (it has no <archive>/{record} record)"
    )
