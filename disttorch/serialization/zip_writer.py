"""Writes PyTorch's zip checkpoint format, so ``torch.load`` reads disttorch's files.

The archive holds ``archive/data.pkl`` (the object, pickled with protocol 2, every tensor
as ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``
and every parameter as ``torch._utils._rebuild_parameter``), one uncompressed record
``archive/data/<key>`` per storage (aligned to 64 bytes, as PyTorch aligns them for
``mmap``), and the ``byteorder``, ``version``, ``.format_version`` and
``.storage_alignment`` records. Tensors whose arrays view one NumPy buffer share one
storage, as views of one storage do in PyTorch. Global names under ``disttorch.`` are
written as ``torch.`` names, so classes, dtypes and devices mean the same in both.
"""

from __future__ import annotations

import collections
import io
import os
import pickle
import struct
import sys
import types
import zipfile
from typing import Any, BinaryIO, ClassVar

import numpy as np

from .. import _dtype, _qscheme
from .._public_name import PYTORCH_HOMES, is_disttorch_class
from .._storage import owning_array
from .._tensor import Size, Tensor, device
from . import names

_ALIGN = 64
_PREFIX = "archive/"


class TorchGlobal:
    """A global name written as-is into the pickle (``torch._utils._rebuild_tensor_v2``)."""

    _cache: ClassVar[dict] = {}

    def __new__(cls, module: str, name: str) -> TorchGlobal:  # noqa: PYI034
        key = (module, name)
        if key not in cls._cache:
            obj = super().__new__(cls)
            obj.module, obj.name = module, name
            cls._cache[key] = obj
        return cls._cache[key]

    def __call__(self, *args: Any) -> Any:  # pickle requires a reduce function to be callable
        raise TypeError(f"{self.module}.{self.name} is a name to write into a file, not a function")


class _StorageRef:
    """One storage to write: a flat C-contiguous array and the key of its record."""

    def __init__(self, key: str, flat: np.ndarray) -> None:
        self.key, self.flat = key, flat
        self.storage_class: str | None = None  # a quantized tensor's (``QInt8Storage``...)


class _Pickler(pickle._Pickler):
    """Pickles with PyTorch's reduction of tensors and torch names for disttorch globals."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file: BinaryIO, protocol: int) -> None:
        super().__init__(file, protocol=protocol)
        self.storages: dict[int, tuple] = {}  # id(root array) -> (_StorageRef, root)

    # ------------------------------------------------------------------ tensors
    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, _StorageRef):
            np_name = obj.flat.dtype.name
            if obj.storage_class is not None:
                return ("storage", TorchGlobal("torch", obj.storage_class), obj.key, "cpu", obj.flat.size)
            if np_name in names.STORAGE_OF:
                return (
                    "storage",
                    TorchGlobal("torch", names.STORAGE_OF[np_name]),
                    obj.key,
                    "cpu",
                    obj.flat.size,
                )
            return (
                "storage",
                TorchGlobal("torch.storage", "UntypedStorage"),
                obj.key,
                "cpu",
                obj.flat.nbytes,
            )
        return None

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, Size):
            return TorchGlobal("torch", "Size"), (tuple(obj),)
        if isinstance(obj, device):
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return TorchGlobal("torch", "device"), args
        return NotImplemented

    def _reduce_tensor(self, t: Tensor) -> tuple:
        kind = type(t)
        if getattr(kind, "_saves_itself", False):  # a layout of its own to keep (a DTensor)
            return t.__reduce_ex__(2)
        if kind is not Tensor and not is_disttorch_class(kind):
            # a user's subclass: its values, then its type and attributes (PyTorch's way)
            rebuild, args = self._reduce_plain(Tensor._make(t._data), t.requires_grad)
            return (
                TorchGlobal("torch._tensor", "_rebuild_from_type_v2"),
                (rebuild, kind, args, dict(t.__dict__)),
            )
        return self._reduce_plain(t, t.requires_grad)

    def _reduce_plain(self, t: Tensor, requires_grad: bool) -> tuple:
        # a non-leaf that requires grad is saved as its values (loaded: a leaf that requires
        # grad), as PyTorch's torch.save does; only multiprocessing refuses it
        from ..nn.parameter import Parameter  # nn sits above the core: imported when saving

        if t.is_quantized:
            return self._reduce_qtensor(t)
        if isinstance(t, Parameter):
            plain = Tensor._make(t._data)
            return (
                TorchGlobal("torch._utils", "_rebuild_parameter"),
                (plain, bool(t.requires_grad), collections.OrderedDict()),
            )
        ref, offset, strides = self._storage_of(t._data)
        hooks = collections.OrderedDict()
        np_name = t._data.dtype.name
        if np_name not in names.TORCH_NAME_OF:
            raise TypeError(f"cannot save a tensor of NumPy dtype {t._data.dtype}")
        args = (ref, offset, tuple(t._data.shape), strides, bool(requires_grad), hooks)
        if np_name in names.STORAGE_OF:
            return TorchGlobal("torch._utils", "_rebuild_tensor_v2"), args
        dtype_global = TorchGlobal("torch", names.TORCH_NAME_OF[np_name])
        return TorchGlobal("torch._utils", "_rebuild_tensor_v3"), args + (dtype_global,)

    def _reduce_qtensor(self, t: Tensor) -> tuple:
        """A quantized tensor as PyTorch writes it: ``_rebuild_qtensor(storage, offset, size,
        stride, (qscheme, scale(s), zero point(s)[, axis]), requires_grad, hooks)``."""
        ref, offset, strides = self._storage_of(t._data)
        ref.storage_class = names.QUANTIZED_STORAGE_OF[t.dtype.name]
        if t.qscheme() is _qscheme.per_tensor_affine:
            params = (t.qscheme(), t.q_scale(), t.q_zero_point())
        else:  # float qparams too: PyTorch writes per_channel_affine, the zero points' dtype tells
            params = (
                _qscheme.per_channel_affine,
                t.q_per_channel_scales(),
                t.q_per_channel_zero_points(),
                t.q_per_channel_axis(),
            )
        args = (ref, offset, tuple(t._data.shape), strides, params, False, collections.OrderedDict())
        return TorchGlobal("torch._utils", "_rebuild_qtensor"), args

    def _storage_of(self, arr: np.ndarray) -> tuple:
        """The storage ``arr`` views (its root buffer when it is a plain strided view of one),
        its offset in elements and its strides in elements."""
        root = owning_array(arr)
        item = arr.dtype.itemsize
        shareable = (
            root.dtype == arr.dtype
            and root.flags.c_contiguous
            and root.size > 0
            and all(s >= 0 and s % item == 0 for s in arr.strides)
        )
        if shareable:
            delta = arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]
            offset = delta // item
            last = offset + sum((n - 1) * s // item for n, s in zip(arr.shape, arr.strides, strict=True))
            shareable = delta % item == 0 and 0 <= offset and (arr.size == 0 or last < root.size)
        if not shareable:
            root = np.ascontiguousarray(arr).reshape(arr.shape)  # (a 0-dim array stays 0-dim)
            offset = 0
        entry = self.storages.get(id(root))
        if entry is None:
            entry = (_StorageRef(str(len(self.storages)), root.reshape(-1)), root)
            self.storages[id(root)] = entry
        strides = tuple(s // item for s in (arr if shareable else root).strides)
        return entry[0], int(offset), strides

    # ------------------------------------------------------------------ globals
    def save_global(self, obj: Any, name: str | None = None) -> None:
        if isinstance(obj, TorchGlobal):
            module, name = obj.module, obj.name
        else:
            name = name or getattr(obj, "__qualname__", None) or obj.__name__
            module = pickle.whichmodule(obj, name)
            try:
                __import__(module)
                found = sys.modules[module]
                for part in name.split("."):
                    found = getattr(found, part)
            except (ImportError, KeyError, AttributeError):
                raise pickle.PicklingError(
                    f"Can't pickle {obj!r}: it's not found as {module}.{name}"
                ) from None
            if found is not obj:
                raise pickle.PicklingError(
                    f"Can't pickle {obj!r}: it's not the same object as {module}.{name}"
                )
            if module == "disttorch" or module.startswith("disttorch."):
                module = (
                    _exported_from(obj, module, name)
                    if not isinstance(obj, type)
                    else _home(obj, module, name)
                )
                module = "torch" + module[len("disttorch") :]
        self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" + name.encode("utf-8") + b"\n")
        self.memoize(obj)

    def save_dtype(self, obj: _dtype.dtype) -> None:
        name = obj.name if obj in _dtype.QUANTIZED else names.TORCH_NAME_OF[obj.numpy.name]
        self.save(TorchGlobal("torch", name))  # through save: a repeated dtype is a memo lookup

    def save_qscheme(self, obj: _qscheme.qscheme) -> None:
        self.save(TorchGlobal("torch", obj.name))

    dispatch[TorchGlobal] = save_global
    dispatch[types.FunctionType] = save_global  # the base class's table names its own method
    dispatch[types.BuiltinFunctionType] = save_global
    dispatch[_dtype.dtype] = save_dtype
    dispatch[type(_dtype.bfloat16)] = save_dtype  # a dtype subclass: its NumPy dtype loads on first use
    dispatch[type(_dtype.qint8)] = save_dtype
    dispatch[_qscheme.qscheme] = save_qscheme


def _exported_from(obj: Any, module: str, name: str) -> str:
    """The closest package above disttorch's ``module`` that exports ``obj`` as ``name``
    (``F.relu``, made in ``disttorch.nn.functional.activation``: ``disttorch.nn.functional``,
    where PyTorch defines it), else ``module``: disttorch splits into private files what
    PyTorch defines in one module, and exports it where PyTorch does."""
    parent = module
    while "." in parent:
        parent = parent.rsplit(".", 1)[0]
        if getattr(sys.modules.get(parent), name, None) is obj:
            return parent
    return module


def _home(cls: type, module: str, name: str) -> str:
    """The module where PyTorch defines disttorch's class (``PYTORCH_HOMES``: the alias gives
    classes these paths; without it they keep their private module)."""
    home = PYTORCH_HOMES.get(module)
    return home if home is not None and getattr(sys.modules.get(home), name, None) is cls else module


def _aligned_info(name: str, offset: int, size: int) -> zipfile.ZipInfo:
    """A stored entry whose data starts on a 64-byte boundary (padding in an extra field)."""
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_STORED
    zip64 = 20 if size * 1.05 > zipfile.ZIP64_LIMIT else 0
    start = offset + 30 + len(name.encode("utf-8")) + zip64 + 4
    pad = -start % _ALIGN
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    return info


def write(obj: Any, f: BinaryIO, protocol: int = 2) -> None:
    """Write ``obj`` to the binary file ``f`` in PyTorch's zip format."""
    buf = io.BytesIO()
    pickler = _Pickler(buf, protocol)
    pickler.dump(obj)
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        records = [
            ("data.pkl", buf.getvalue()),
            (".format_version", b"1"),
            (".storage_alignment", str(_ALIGN).encode()),
            ("byteorder", sys.byteorder.encode()),
        ]
        records += [(f"data/{ref.key}", ref.flat) for ref, _ in pickler.storages.values()]
        records += [("version", b"3\n"), (".data/serialization_id", os.urandom(20).hex().encode())]
        for name, data in records:
            if isinstance(data, np.ndarray):
                data = memoryview(np.ascontiguousarray(data).reshape(-1).view(np.uint8))
            info = _aligned_info(_PREFIX + name, zf.fp.tell(), len(data))
            zf.writestr(info, data)
