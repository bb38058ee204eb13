"""``save`` and ``load`` in PyTorch's file format, and the weights-only allow-list
(``torch.serialization``'s names).

``disttorch.save`` writes PyTorch's zip format (what ``torch.save`` writes by default), so
``torch.load(f)`` with ``weights_only=True`` reads a disttorch file into torch tensors, and
``disttorch.load`` reads what ``torch.save`` writes: the zip format, the legacy format
(``_use_new_zipfile_serialization=False``) and disttorch's own earlier ``DTCK`` files.
Loading is weights-only by default, as in PyTorch 2.6+: the file may name only tensors,
storages, dtypes, ``Size``/``device``, numbers, strings and containers, plus the globals
allowed with :func:`add_safe_globals` / :func:`safe_globals`; anything else raises
``pickle.UnpicklingError`` and nothing in the file is imported or run. Memory for a load is
bounded by the file's size: each storage is read once and shared by every tensor viewing it.

Differences from PyTorch: every tensor loads on the CPU (``map_location`` may only name
the CPU; a file saved on a GPU needs ``map_location="cpu"``, as with PyTorch's CPU build);
element types disttorch lacks are widened losslessly (uint16 -> int32, uint32/uint64 ->
int64; bfloat16 -> float32 only when the tree has no ``disttorch.bfloat16``); sparse,
quantized and nested tensors are refused. Saving to a path is atomic (temporary file,
``fsync``, rename) and the file gets the umask's permissions.

The formats live beside this file: ``names`` (PyTorch's dtype and storage names and how a
pickle's global names resolve), ``unpickler`` (the weights-only unpickler and the rebuild
functions it admits), ``zip_writer``/``zip_reader`` (PyTorch's zip format),
``legacy_reader`` (PyTorch's pre-1.6 format), ``dtck_reader`` (disttorch's own earlier
format) and ``files`` (atomic, umask-respecting writes whose errors name the path).
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import warnings
import zipfile
from collections.abc import Iterator
from typing import Any, BinaryIO

from .._atomic_file import atomic_write
from .._module_archive import SCRIPT_MODULE, kind_of
from . import dtck_reader, legacy_reader, zip_reader, zip_writer
from .unpickler import _user_safe, globals_named, is_allowed_global
from .zip_reader import FormatError

__all__ = [
    "DEFAULT_PROTOCOL",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "get_unsafe_globals_in_checkpoint",
    "load",
    "normalize_storage_type",
    "safe_globals",
    "save",
]

DEFAULT_PROTOCOL = 2
FILE_LIKE = str | os.PathLike | BinaryIO


def save(
    obj: Any,
    f: FILE_LIKE,
    pickle_module: Any = pickle,
    pickle_protocol: int = DEFAULT_PROTOCOL,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """Save ``obj`` (tensors, modules' state dicts, nested containers, ...) to ``f``.

    Writes PyTorch's zip format: ``torch.load`` reads the file (with ``weights_only=True``
    when ``obj`` holds only tensors, numbers, strings and containers). Tensors that view one
    buffer share one storage in the file, as in PyTorch.

    Args:
        obj: the object to save.
        f: a path (written atomically, permissions from the umask) or a writable binary file.
        pickle_module: accepted for compatibility; only the standard ``pickle`` is supported.
        pickle_protocol: the pickle protocol of the structure record. Default: 2 (PyTorch's).
        _use_new_zipfile_serialization: must be True (disttorch writes only the zip format).

    Raises:
        OSError: naming the path, when it cannot be written (e.g. a full disk).
    """
    if pickle_module is not pickle:
        raise ValueError("disttorch.save supports only the standard pickle module")
    if not _use_new_zipfile_serialization:
        raise ValueError(
            "disttorch.save writes only PyTorch's zip format "
            "(_use_new_zipfile_serialization=True); the legacy format can be read, not written"
        )
    if hasattr(f, "write"):
        try:
            zip_writer.write(obj, f, pickle_protocol)
        except OSError as exc:
            name = getattr(f, "name", "<file object>")
            raise type(exc)(exc.errno, f"could not write {name}: {exc.strerror or exc}", name) from exc
        return
    path = os.fspath(f)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    # streamed into a temporary file (removed if pickling fails), then renamed over the target
    atomic_write(path, lambda out: zip_writer.write(obj, out, pickle_protocol))


def load(
    f: FILE_LIKE,
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """Load an object saved by ``disttorch.save`` or ``torch.save``.

    Args:
        f: a path or a readable binary file object.
        map_location: where storages go: None, ``"cpu"``, ``disttorch.device("cpu")``, a
            dict mapping saved locations to new ones, or ``callable(storage, location)``
            returning a storage (or None). Only the CPU exists in disttorch.
        pickle_module: accepted for compatibility; must be None or ``pickle``.
        weights_only: only tensors, containers, numbers, strings and the allowed globals
            (``add_safe_globals``). Default: True (None means True, as in PyTorch 2.6+).
            ``weights_only=False`` unpickles anything and can run code from the file: use it
            only for files from a source you trust.
        mmap: map the file's storages copy-on-write instead of reading them (zip format
            read from a path only).
        pickle_load_args: ``encoding=`` etc., passed to the unpickler.

    Raises:
        pickle.UnpicklingError: the file names a global that is not allowed.
        RuntimeError: the file is not a checkpoint, is truncated or corrupt (the message
            says which and what to do).
    """
    if pickle_module not in (None, pickle):
        raise ValueError("disttorch.load supports only the standard pickle module")
    weights_only = True if weights_only is None else bool(weights_only)
    path = None if hasattr(f, "read") else os.fspath(f)
    if mmap and path is None:
        raise ValueError("f must be a file path in order to use the mmap argument")
    if path is not None:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        with open(path, "rb") as fh:
            return _load_stream(
                fh,
                path,
                map_location,
                weights_only,
                path if mmap else None,
                os.fstat(fh.fileno()).st_size,
                pickle_load_args,
            )
    what = str(getattr(f, "name", "the file object"))
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    start = f.tell()
    size = f.seek(0, io.SEEK_END) - start
    f.seek(start)
    return _load_stream(f, what, map_location, weights_only, None, size, pickle_load_args)


def _load_stream(
    fh: BinaryIO,
    what: str,
    map_location: Any,
    weights_only: bool,
    mmap_path: str | None,
    size: int,
    pickle_args: dict,
) -> Any:
    start = fh.tell()
    head = fh.read(16)
    fh.seek(start)
    if head[:4] == b"PK\x03\x04":
        if start:
            fh = io.BytesIO(fh.read())
        if _is_script_archive(fh):
            return _load_script_archive(fh, weights_only)
        return zip_reader.read(fh, what, map_location, weights_only, mmap_path, size, **pickle_args)
    if mmap_path is not None:
        raise ValueError(f"{what}: mmap=True needs a file in PyTorch's zip format")
    if head[:4] == dtck_reader.MAGIC:
        return dtck_reader.read(fh.read(), what, weights_only)
    if head[:1] == b"\x80":
        return legacy_reader.read(fh.read(), what, map_location, weights_only, **pickle_args)
    raise FormatError(_describe(head, what, size))


def _is_script_archive(fh: BinaryIO) -> bool:
    """Whether the zip in ``fh`` is a ``torch.jit.save`` archive (``fh`` rewound)."""
    try:
        with zipfile.ZipFile(fh) as zf:
            return kind_of(zf.namelist()) == SCRIPT_MODULE
    except zip_reader.ZIP_DAMAGE:
        return False  # the zip reader says what is wrong with it
    finally:
        fh.seek(0)


def _load_script_archive(fh: BinaryIO, weights_only: bool) -> Any:
    """What PyTorch's ``torch.load`` does with a TorchScript archive: warn, refuse under
    ``weights_only`` (loading runs the archive's pickle), else hand it to ``torch.jit.load``."""
    warnings.warn(
        "'torch.load' received a zip file that looks like a TorchScript archive dispatching to "
        "'torch.jit.load' (call 'torch.jit.load' directly to silence this warning)",
        UserWarning,
        stacklevel=4,
    )
    if weights_only:
        raise RuntimeError(
            "Cannot use ``weights_only=True`` with TorchScript archives passed to ``torch.load``. "
            "Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it "
            "can result in arbitrary code execution. Do it only if you got the file from a trusted source."
        )
    from ..jit import load as jit_load

    return jit_load(fh)


def _describe(head: bytes, what: str, size: int) -> str:
    """Say what a file that is no checkpoint looks like, and what to do."""
    if size == 0:
        return f"{what} is empty: it is not a checkpoint (was the save interrupted?)"
    if len(head) >= 9 and head[8:9] == b"{":
        return f"{what} looks like a safetensors file; read it with disttorch.utils.safetensors.load_file"
    if head[:6] == b"\x93NUMPY":
        return f"{what} is a NumPy .npy file; read it with numpy.load and disttorch.from_numpy"
    return (
        f"{what} is not a PyTorch or disttorch checkpoint (it starts with {head[:8]!r}); "
        "disttorch.load reads files written by torch.save or disttorch.save"
    )


def normalize_storage_type(storage_type: type) -> type:
    """The ``torch`` storage class named as ``storage_type`` (``FloatStorage`` ->
    ``torch.FloatStorage``), as PyTorch's helper that checkpoint writers call."""
    import disttorch

    return getattr(disttorch, storage_type.__name__)


def get_unsafe_globals_in_checkpoint(f: FILE_LIKE) -> list[str]:
    """The globals (``"module.name"``) a checkpoint written by ``torch.save`` names that a
    ``weights_only`` load would refuse (neither on the allow-list nor added with
    :func:`add_safe_globals`), found without unpickling anything.

    Raises:
        ValueError: ``f`` is not a zip-format checkpoint, or is a TorchScript archive.
    """
    with contextlib.ExitStack() as stack:
        fh = f if hasattr(f, "read") else stack.enter_context(open(os.fspath(f), "rb"))
        if not zipfile.is_zipfile(fh):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        fh.seek(0)
        zf = stack.enter_context(zipfile.ZipFile(fh))
        if kind_of(zf.namelist()) == SCRIPT_MODULE:
            raise ValueError(
                "Expected input to be a checkpoint returned by torch.save but got a torchscript checkpoint"
            )
        pkl = [n for n in zf.namelist() if n.endswith("data.pkl") and n.count("/") == 1]
        if len(pkl) != 1:
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        found = globals_named(io.BytesIO(zf.read(pkl[0])))
    return sorted(name for name in found if not is_allowed_global(name))


# ---------------------------------------------------------------------- the allow-list
def add_safe_globals(safe_globals: list) -> None:
    """Allow these globals (classes, functions, or ``(obj, "module.name")`` pairs) in
    ``weights_only`` loads, e.g. a model class whose whole pickled instance a file holds.

    A ``disttorch.`` class is also allowed under its ``torch.`` name, so a file saved by
    PyTorch that names ``torch.nn.modules.linear.Linear`` loads as disttorch's ``Linear``.
    """
    for entry in safe_globals:
        if isinstance(entry, tuple) and (len(entry) != 2 or not isinstance(entry[1], str)):
            raise TypeError(f"expected (object, 'module.name'), got {entry!r}")
        _user_safe.append(entry)


def get_safe_globals() -> list:
    """The globals added with :func:`add_safe_globals` (or the active :func:`safe_globals`)."""
    return list(_user_safe)


def clear_safe_globals() -> None:
    """Forget every global added with :func:`add_safe_globals`."""
    _user_safe.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list) -> Iterator[None]:
    """Context manager allowing these globals in ``weights_only`` loads inside its block::

    with disttorch.serialization.safe_globals([MyModel]):
        model = disttorch.load("model.pt")
    """
    saved = list(_user_safe)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_safe[:] = saved
