"""``torch._utils``: the rebuild functions pickles name (``_rebuild_tensor_v2``,
``_rebuild_parameter``...), callable by hand on a storage as old checkpoints' loaders and
libraries that pickle tensors themselves call them; and the small helpers libraries import
from here (``_flatten_dense_tensors``, ``_get_device_index``, ``_import_dotted_name``,
``classproperty``...), answering as PyTorch's CPU build does."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

from . import _dtype
from ._buffers import empty_strided
from ._storage import TypedStorage, UntypedStorage
from ._tensor import Tensor, _rebuild_from_type_v2, device
from .compiler import is_compiling
from .serialization import unpickler

__all__ = [
    "_element_size",
    "_flatten_dense_tensors",
    "_get_device_index",
    "_get_obj_state",
    "_import_dotted_name",
    "_rebuild_from_type_v2",
    "_rebuild_parameter",
    "_rebuild_parameter_with_state",
    "_rebuild_tensor",
    "_rebuild_tensor_v2",
    "_rebuild_tensor_v3",
    "_set_obj_state",
    "_unflatten_dense_tensors",
    "classproperty",
    "get_current_device_index",
    "is_compiling",
]


def _loaded(storage: Any) -> unpickler.Storage:
    """``storage`` (a ``TypedStorage``, an ``UntypedStorage`` or a storage ``torch.load``
    made) as the loader's storage, sharing its memory."""
    if isinstance(storage, unpickler.Storage):
        return storage
    if isinstance(storage, TypedStorage):
        elements = storage._elements()
        return unpickler.Storage(elements, elements.dtype.name, "cpu")
    if isinstance(storage, UntypedStorage):
        return unpickler.Storage(storage._bytes, None, "cpu")
    raise TypeError(f"expected a storage to rebuild a tensor from, got {type(storage).__name__}")


def _on_meta(storage: Any, size: Sequence[int], stride: Sequence[int], dtype: Any = None) -> Tensor | None:
    """The meta tensor of ``size``, ``stride`` and the storage's dtype (or ``dtype``) when
    ``storage`` is on the meta device (a lazy loader's placeholder), else None."""
    untyped = storage._untyped_storage if isinstance(storage, TypedStorage) else storage
    if not (isinstance(untyped, UntypedStorage) and untyped.device.type == "meta"):
        return None
    if dtype is None:
        dtype = storage.dtype if isinstance(storage, TypedStorage) else _dtype.uint8
    return empty_strided(tuple(size), tuple(stride), dtype=dtype, device="meta")


def _rebuild_tensor(storage: Any, storage_offset: int, size: Sequence[int], stride: Sequence[int]) -> Tensor:
    """A tensor of ``size`` and ``stride`` (in elements) showing ``storage`` from element
    ``storage_offset`` on, sharing its memory; a meta tensor over a meta storage."""
    meta = _on_meta(storage, size, stride)
    if meta is not None:
        return meta
    return unpickler.rebuild_tensor(_loaded(storage), storage_offset, tuple(size), tuple(stride))


def _rebuild_tensor_v2(
    storage: Any,
    storage_offset: int,
    size: Sequence[int],
    stride: Sequence[int],
    requires_grad: bool,
    backward_hooks: Any,
    metadata: Any = None,
) -> Tensor:
    """:func:`_rebuild_tensor`, then ``requires_grad`` (a leaf); the hooks dict is not kept."""
    meta = _on_meta(storage, size, stride)
    if meta is not None:
        return meta.requires_grad_(requires_grad)
    return unpickler.rebuild_tensor_v2(
        _loaded(storage), storage_offset, tuple(size), tuple(stride), requires_grad, backward_hooks
    )


def _rebuild_tensor_v3(
    storage: Any,
    storage_offset: int,
    size: Sequence[int],
    stride: Sequence[int],
    requires_grad: bool,
    backward_hooks: Any,
    dtype: Any,
    metadata: Any = None,
) -> Tensor:
    """:func:`_rebuild_tensor_v2` of an untyped storage read as ``dtype``."""
    meta = _on_meta(storage, size, stride, dtype)
    if meta is not None:
        return meta.requires_grad_(requires_grad)
    return unpickler.rebuild_tensor_v3(
        _loaded(storage), storage_offset, tuple(size), tuple(stride), requires_grad, backward_hooks, dtype
    )


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any) -> Any:
    """``nn.Parameter(data, requires_grad)``."""
    return unpickler.rebuild_parameter(data, requires_grad, backward_hooks)


def _rebuild_parameter_with_state(data: Tensor, requires_grad: bool, backward_hooks: Any, state: Any) -> Any:
    """:func:`_rebuild_parameter` with the parameter's Python attributes ``state`` set."""
    return unpickler.rebuild_parameter(data, requires_grad, backward_hooks, state)


def _get_obj_state(obj: Any) -> Any:
    """An object's Python attributes as pickles keep them: its ``__dict__`` (a copy), or
    ``(dict, slots)`` when its type adds ``__slots__`` of its own; None when it has neither."""
    state = dict(getattr(obj, "__dict__", {}))
    slots = {
        name: getattr(obj, name)
        for kind in type(obj).__mro__
        if kind is not Tensor
        for name in vars(kind).get("__slots__", ())
        if name not in ("__dict__", "__weakref__") and hasattr(obj, name)
    }
    return (state, slots) if slots else state or None


def _set_obj_state(obj: Any, state: Any) -> Any:
    """Set the attributes :func:`_get_obj_state` gave; returns ``obj``."""
    for part in state if isinstance(state, tuple) else (state,):
        for key, value in (part or {}).items():
            setattr(obj, key, value)
    return obj


def _flatten_dense_tensors(tensors: Sequence[Tensor]) -> Tensor:
    """The tensors' elements one after the other in one 1-D tensor (a copy)."""
    from .ops.shape import cat

    flat = [t.contiguous().view(-1) for t in tensors]
    return flat[0] if len(flat) == 1 else cat(flat)


def _unflatten_dense_tensors(flat: Tensor, tensors: Sequence[Tensor]) -> tuple:
    """Views of ``flat`` shaped like each of ``tensors`` in turn (undoes
    :func:`_flatten_dense_tensors`)."""
    outputs, offset = [], 0
    for t in tensors:
        n = t.numel()
        outputs.append(flat.narrow(0, offset, n).view_as(t))
        offset += n
    return tuple(outputs)


def _element_size(dtype: Any) -> int:
    """Bytes per element of ``dtype``."""
    if not isinstance(dtype, _dtype.dtype):
        raise RuntimeError(f"expected torch.dtype, but got {type(dtype)}")
    return dtype.itemsize


def _get_device_index(device_arg: Any, optional: bool = False, allow_cpu: bool = False) -> int:
    """The index of a device (an int, a string or a ``torch.device``): -1 for the CPU when
    ``allow_cpu``, which is otherwise refused; ``optional`` allows no index."""
    if isinstance(device_arg, str):
        device_arg = device(device_arg)
    if isinstance(device_arg, int):
        return device_arg
    if isinstance(device_arg, device):
        if device_arg.type == "cpu":
            if not allow_cpu:
                raise ValueError(f"Expected a non cpu device, but got: {device_arg}")
            return -1
        if device_arg.index is not None:
            return device_arg.index
    if device_arg is None or optional:
        return -1 if device_arg is None and allow_cpu else get_current_device_index()
    raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device_arg}")


def get_current_device_index() -> int:
    """The current accelerator's index: -1, no accelerator here."""
    return -1


def _get_available_device_type() -> None:
    """The accelerator type in use: none (a CPU build)."""
    return None


def _import_dotted_name(name: str) -> Any:
    """The object a dotted name names: the module of its first part, then attributes."""
    components = name.split(".")
    obj = importlib.import_module(components[0])
    for component in components[1:]:
        obj = getattr(obj, component)
    return obj


class classproperty:
    """A read-only property of a class (``@classproperty def name(cls)``)."""

    def __init__(self, fget: Callable) -> None:
        self.fget = fget

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        return self.fget(owner if owner is not None else type(instance))
