"""Storages: the memory under a tensor, as ``torch.UntypedStorage`` and ``torch.TypedStorage``.

A disttorch tensor is a NumPy array; its storage is the buffer of the array at the root of
its ``base`` chain (the array that owns the memory), seen as bytes. So views share one
storage (same ``data_ptr()``, same ``nbytes()``), ``storage_offset()`` counts elements from
its start, and writing through a storage changes the tensors over it. Libraries use this to
find tensors that share memory (safetensors, transformers and accelerate when saving tied
weights) and to name types (Lightning).
"""

from __future__ import annotations

import gc
import threading
import warnings
import weakref
from typing import Any

import numpy as np

from . import _dtype
from ._array_base import copy_memory, owning_array, root_bytes
from ._tensor import Tensor, device

__all__ = ["TypedStorage", "UntypedStorage", "is_storage", "owning_array"]


class UntypedStorage:
    """Bytes of CPU memory: ``UntypedStorage(n)`` allocates ``n`` zeroed bytes;
    ``tensor.untyped_storage()`` is the memory under a tensor (shared with it)."""

    _meta = False  # a storage on the meta device: a size without memory anything reads

    def __init__(self, size: int | Any = 0, *, device: Any = None) -> None:
        if device is not None and str(device) not in ("cpu", "meta"):
            raise RuntimeError(f"UntypedStorage: only CPU memory exists here, got device={device!r}")
        if device is not None and str(device) == "meta":
            self._meta = True
        if isinstance(size, np.ndarray):  # the memory of an array (used by tensors)
            self._bytes = size
        elif isinstance(size, int):
            self._bytes = np.zeros(size, dtype=np.uint8)
        else:
            self._bytes = np.frombuffer(bytearray(bytes(size)), dtype=np.uint8)

    @classmethod
    def from_buffer(
        cls,
        buffer: Any,
        byte_order: str | None = None,
        count: int = -1,
        offset: int = 0,
        *,
        dtype: Any = None,
    ) -> UntypedStorage:
        """A storage holding a copy of ``count`` elements of ``dtype`` (all when -1) read from
        ``buffer`` at byte ``offset``, in ``byte_order`` ("native", "little" or "big": needed
        for elements other than bytes), stored in this machine's byte order."""
        if dtype is None:
            raise RuntimeError("argument 'dtype' cannot be None")
        if byte_order is None and dtype not in (_dtype.uint8, _dtype.int8):
            raise RuntimeError("function missing required argument 'byte_order' (pos 2)")
        orders = {"native": "=", "little": "<", "big": ">", None: "="}
        if byte_order not in orders:
            raise ValueError(f"invalid byte_order {byte_order!r} (expected 'big', 'little', or 'native')")
        raw = memoryview(buffer).cast("B")
        if not 0 <= offset <= raw.nbytes:
            raise ValueError(
                f"offset must be non-negative and no greater than buffer length ({raw.nbytes}), got {offset}"
            )
        kind = np.dtype(dtype.numpy).newbyteorder(orders[byte_order])
        if count < 0 and (raw.nbytes - offset) % kind.itemsize:
            raise ValueError(
                f"buffer size ({raw.nbytes - offset}) must be a multiple of element size ({kind.itemsize})"
            )
        if count >= 0 and count * kind.itemsize > raw.nbytes - offset:
            raise ValueError(
                f"buffer has only {raw.nbytes - offset} bytes after offset {offset}, but specified a size of {count}"
            )
        elements = np.frombuffer(raw, dtype=kind, count=count, offset=offset)
        return cls(elements.astype(kind.newbyteorder("=")).view(np.uint8).copy())

    @classmethod
    def from_file(cls, filename: str, shared: bool = False, nbytes: int = 0) -> UntypedStorage:
        """The first ``nbytes`` bytes of a file, memory-mapped: ``shared=True`` writes changes
        back to the file, ``shared=False`` keeps them private (copy on write)."""
        if nbytes == 0:
            return cls(np.zeros(0, dtype=np.uint8))
        return cls(np.memmap(filename, dtype=np.uint8, mode="r+" if shared else "c", shape=(nbytes,)))

    @property
    def device(self) -> device:
        return device("meta" if self._meta else "cpu")

    is_cuda = False
    is_sparse = False

    def nbytes(self) -> int:
        return int(self._bytes.size)

    size = nbytes

    def __len__(self) -> int:
        return int(self._bytes.size)

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        """The address of the first byte (0 on the meta device, as in PyTorch)."""
        return 0 if self._meta else int(self._bytes.__array_interface__["data"][0])

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return UntypedStorage(self._bytes[idx])
        return int(self._bytes[idx])

    def __setitem__(self, idx: int | slice, value: Any) -> None:
        self._bytes[idx] = value

    def tolist(self) -> list[int]:
        return self._bytes.tolist()

    def __iter__(self) -> Any:
        return iter(self.tolist())

    def resize_(self, nbytes: int) -> UntypedStorage:
        """``nbytes`` bytes: new memory holding the old bytes that fit (zeros after them). As
        in PyTorch, where every tensor and storage object over this memory shares one
        reallocated storage, they all move to the new memory (each tensor while it still fits
        there; one past the new end keeps the old memory)."""
        nbytes = int(nbytes)
        if nbytes < 0:
            raise RuntimeError(f"new_size must be non-negative, got {nbytes}")
        old = self._bytes
        new = np.zeros(nbytes, dtype=np.uint8)
        keep = min(nbytes, old.size)
        new[:keep] = old[:keep]
        self._bytes = new
        with _objects_lock:
            _objects[_key(new)] = self
        if old.size:
            _move_all(old, new)
        return self

    def fill_(self, value: int) -> UntypedStorage:
        self._bytes[...] = value
        return self

    def copy_(self, source: UntypedStorage, non_blocking: bool | None = None) -> UntypedStorage:
        if source.nbytes() != self.nbytes():
            raise RuntimeError(f"copy_: sizes differ ({source.nbytes()} bytes into {self.nbytes()})")
        self._bytes[...] = source._bytes
        return self

    def __deepcopy__(self, memo: dict) -> UntypedStorage:
        """A copy of these bytes, shared with the deep copies of the tensors over them."""
        return UntypedStorage(copy_memory(self._bytes, memo))

    def clone(self) -> UntypedStorage:
        return UntypedStorage(self._bytes.copy())

    def cpu(self) -> UntypedStorage:
        return self

    def is_shared(self) -> bool:
        """Whether these bytes lie in shared memory (a tensor's ``share_memory_()``)."""
        from ._shared_memory import segment_of

        return segment_of(self._bytes) is not None

    def is_pinned(self, device: Any = "cuda") -> bool:
        return False

    def untyped(self) -> UntypedStorage:
        return self

    def _typed_storage(self) -> TypedStorage:
        return TypedStorage(wrap_storage=self, dtype=_dtype.uint8, _internal=True)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UntypedStorage) and (self.data_ptr(), self.nbytes()) == (
            other.data_ptr(),
            other.nbytes(),
        )

    def __hash__(self) -> int:
        return hash((self.data_ptr(), self.nbytes()))

    def __repr__(self) -> str:
        body = "..." if self._meta else "\n".join(f" {b}" for b in self._bytes.tolist())
        return f"{body}\n[torch.storage.UntypedStorage(device={self.device.type}) of size {self.nbytes()}]"


#: PyTorch's switches for the TypedStorage warning: shown the first time only, unless always
_typed_warning = {"always": False, "shown": False}


def _set_always_warn_typed_storage_removal(always_warn: bool) -> None:
    """Show the TypedStorage deprecation warning at every use, not only the first."""
    _typed_warning["always"] = bool(always_warn)


def _reset_warn_typed_storage_removal() -> None:
    """Let the next use show the TypedStorage deprecation warning again."""
    _typed_warning["shown"] = False


def _warn_typed_storage() -> None:
    if _typed_warning["shown"] and not _typed_warning["always"]:
        return
    _typed_warning["shown"] = True
    warnings.warn(
        "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
        "only storage class. This should only matter to you if you are using storages directly.  To "
        "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
        UserWarning,
        stacklevel=3,
    )


#: the legacy storage classes (``torch.FloatStorage``, ...) and their dtypes
LEGACY_STORAGE_NAMES = (
    ("BFloat16Storage", _dtype.bfloat16),
    ("BoolStorage", _dtype.bool),
    ("ByteStorage", _dtype.uint8),
    ("CharStorage", _dtype.int8),
    ("ComplexDoubleStorage", _dtype.complex128),
    ("ComplexFloatStorage", _dtype.complex64),
    ("DoubleStorage", _dtype.float64),
    ("FloatStorage", _dtype.float32),
    ("HalfStorage", _dtype.float16),
    ("IntStorage", _dtype.int32),
    ("LongStorage", _dtype.int64),
    ("ShortStorage", _dtype.int16),
)


class TypedStorage:
    """Elements of one dtype over an ``UntypedStorage`` (deprecated in PyTorch, which warns;
    ``tensor.storage()`` returns one)."""

    is_sparse = False

    def __init__(
        self,
        *args: Any,
        wrap_storage: UntypedStorage | None = None,
        dtype: Any = None,
        device: Any = None,
        _internal: bool = False,
    ) -> None:
        if not _internal:
            _warn_typed_storage()
        self.dtype = dtype if dtype is not None else _dtype.get_default_dtype()
        if wrap_storage is None:
            count = args[0] if args and isinstance(args[0], int) else 0
            values = (
                None if not args or isinstance(args[0], int) else np.asarray(args[0], dtype=self.dtype.numpy)
            )
            wrap_storage = UntypedStorage(
                count * self._itemsize() if values is None else values.reshape(-1).view(np.uint8).copy(),
                device=device,
            )
        self._untyped_storage = wrap_storage

    @classmethod
    def _from_buffer(cls, *args: Any, dtype: Any = None, device: Any = None, **kwargs: Any) -> TypedStorage:
        """``from_buffer`` without the deprecation warning (``torch.ByteStorage._from_buffer``)."""
        if cls is TypedStorage:
            dtype = _dtype.get_default_dtype() if dtype is None else dtype
            if device is not None and str(device) != "cpu":
                raise RuntimeError(f"TypedStorage.from_buffer: Not available for device {device}")
        else:  # a legacy class: its own dtype
            for name, given in (("dtype", dtype if len(args) < 5 else args[4]), ("device", device)):
                if given is not None:
                    raise RuntimeError(
                        f"from_buffer: '{name}' can only be specified in "
                        "UntypedStorage.from_buffer and TypedStorage.from_buffer"
                    )
            dtype = cls._dtype
        untyped = UntypedStorage.from_buffer(*args, dtype=dtype, **kwargs)
        return TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)

    @classmethod
    def from_buffer(cls, *args: Any, **kwargs: Any) -> TypedStorage:
        """A storage of ``buffer``'s elements (``UntypedStorage.from_buffer``'s arguments; a
        legacy class such as ``torch.FloatStorage`` reads its own dtype)."""
        _warn_typed_storage()
        return cls._from_buffer(*args, **kwargs)

    def _itemsize(self) -> int:
        return int(np.dtype(self.dtype.numpy).itemsize)

    def _elements(self) -> np.ndarray:
        raw = self._untyped_storage._bytes
        usable = raw[: raw.size - raw.size % self._itemsize()]
        return usable.view(self.dtype.numpy)

    @property
    def device(self) -> Any:
        return self._untyped_storage.device

    def size(self) -> int:
        return self.nbytes() // self._itemsize()

    def __len__(self) -> int:
        return self.size()

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def element_size(self) -> int:
        return self._itemsize()

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    def _typed_storage(self) -> TypedStorage:
        return self

    def __getitem__(self, idx: int) -> Any:
        return self._elements()[idx].item()

    def __setitem__(self, idx: int | slice, value: Any) -> None:
        self._elements()[idx] = value

    def tolist(self) -> list:
        return self._elements().tolist()

    def cpu(self) -> TypedStorage:
        return self

    def is_shared(self) -> bool:
        return self._untyped_storage.is_shared()

    def _pickle_storage_type(self) -> str:
        """The legacy class checkpoints name for this storage's dtype (``"FloatStorage"``)."""
        for name, dtype in LEGACY_STORAGE_NAMES:
            if dtype == self.dtype:
                return name
        raise KeyError(f"dtype {self.dtype} is not recognized")

    def __repr__(self) -> str:
        body = "..." if self._untyped_storage._meta else "\n".join(f" {v}" for v in self.tolist())
        where = self.device.type
        return (
            f"{body}\n[torch.storage.TypedStorage(dtype={self.dtype}, device={where}) of size {self.size()}]"
        )


def _move_all(old: np.ndarray, new: np.ndarray) -> None:
    """Move the live tensors and storage objects over the bytes ``old`` to ``new`` (a
    reallocation). NumPy keeps no list of an array's views, so this looks through the
    collector's objects: a cost of reallocating a storage that has contents, which is rare."""
    root = owning_array(old)
    tensors, storages = _subclasses(Tensor), _subclasses(UntypedStorage)
    for obj in gc.get_objects():
        kind = type(obj)
        if kind in tensors:
            if owning_array(obj._data) is root:
                _rebase(obj, old, new)
        elif kind in storages and obj._bytes is not new and owning_array(obj._bytes) is root:
            if obj._bytes.size == old.size and obj.data_ptr() == old.__array_interface__["data"][0]:
                obj._bytes = new


def _subclasses(cls: type) -> set:
    """``cls`` and its subclasses, at every depth."""
    found, todo = set(), [cls]
    while todo:
        c = todo.pop()
        if c not in found:
            found.add(c)
            todo.extend(c.__subclasses__())
    return found


def _rebase(t: Tensor, old: np.ndarray, new: np.ndarray) -> None:
    """Move ``t`` from the bytes ``old`` to the same place in ``new`` (a reallocated storage),
    when it lies in ``old`` and fits in ``new``."""
    arr = t._data
    start = arr.__array_interface__["data"][0] - old.__array_interface__["data"][0]
    extent = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides)) + arr.itemsize if arr.size else 0
    if (
        type(arr) is np.ndarray
        and 0 <= start
        and start + extent <= min(old.size, new.size)
        and min(arr.strides, default=0) >= 0
    ):
        t._data = np.ndarray(arr.shape, arr.dtype, buffer=new, offset=start, strides=arr.strides)


#: the storage object of each memory a live storage object covers, by (address, bytes)
_objects: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_objects_lock = threading.Lock()


def _key(raw: np.ndarray) -> tuple[int, int]:
    return raw.__array_interface__["data"][0], raw.size


def untyped_storage(self: Tensor) -> UntypedStorage:
    """The bytes of memory this tensor lies in, shared with it (and with its views); if the
    storage is reallocated (``resize_``, or a ``set_`` beyond its end), this tensor follows.
    As in PyTorch, one memory is one object (``a.untyped_storage() is a[1:].untyped_storage()``),
    which lives while a tensor that asked for it does (the paths that move a tensor to other
    memory, ``.data =``, ``set_``, ``Module.to``, drop it, so old memory is not kept)."""
    raw = root_bytes(self._data)
    key = _key(raw)
    found = getattr(self, "_storage_object", None)
    if found is None or _key(found._bytes) != key:
        with _objects_lock:  # (threads asking at once get one object)
            found = _objects.get(key)
            if found is None or _key(found._bytes) != key:
                found = _objects[key] = UntypedStorage(raw)
        self._storage_object = found
    return found


def storage(self: Tensor) -> TypedStorage:
    """The memory as elements of this tensor's dtype (deprecated in PyTorch, which warns)."""
    _warn_typed_storage()
    return _typed_storage(self)


def storage_offset(self: Tensor) -> int:
    """Elements from the start of the storage to this tensor's first element."""
    start = root_bytes(self._data).__array_interface__["data"][0]
    return (self.data_ptr() - start) // self._data.itemsize


def storage_elements(storage: UntypedStorage | TypedStorage, dtype: _dtype.dtype) -> np.ndarray:
    """The elements of ``storage`` as a 1-D array of ``dtype`` sharing its memory: what the
    legacy constructors (``torch.Tensor(storage)``, ``torch.FloatTensor(storage)``,
    ``x.new(storage)``) hold. A typed storage must have that dtype, as in PyTorch."""
    if isinstance(storage, TypedStorage):
        if storage.dtype != dtype:
            raise RuntimeError(
                f"Expected a Storage of type {dtype.scalar_name} or an UntypedStorage, but got type "
                f"{storage.dtype.scalar_name} for argument 1 'storage'"
            )
        storage = storage.untyped()
    return TypedStorage(wrap_storage=storage, dtype=dtype, _internal=True)._elements()


# (``torch.Tensor(storage)`` in ``_tensor.py`` finds it on the storage's class)
UntypedStorage._elements_as = TypedStorage._elements_as = storage_elements


def _typed_storage(self: Tensor) -> TypedStorage:
    """``storage()`` without the deprecation warning (what PyTorch's own code calls)."""
    return TypedStorage(wrap_storage=untyped_storage(self), dtype=self.dtype, _internal=True)


#: bound as ``Tensor`` methods in the ops binding step
TENSOR_METHODS = {
    "untyped_storage": untyped_storage,
    "storage": storage,
    "_typed_storage": _typed_storage,
    "storage_offset": storage_offset,
}


def is_storage(obj: Any) -> bool:
    """Whether ``obj`` is a storage (untyped or typed)."""
    return isinstance(obj, (UntypedStorage, TypedStorage))
