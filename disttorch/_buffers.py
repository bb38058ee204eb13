"""Tensors over memory given by the caller or laid out by it: ``asarray``, ``frombuffer``,
``empty_strided``, ``empty_permuted``, ``to_dlpack``; and ``typename``/``is_inference``.

``frombuffer`` and ``asarray`` share memory with their source when they can (a NumPy array,
a buffer-protocol object, a tensor), as PyTorch does; ``empty_strided``/``empty_permuted``
give NumPy arrays with exactly the strides asked for.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _creation, _dtype
from ._inference import INFERENCE
from ._storage import TypedStorage, UntypedStorage
from ._tensor import Tensor, _as_meta, _check_device, _wants_meta

__all__ = [
    "asarray",
    "empty_permuted",
    "empty_strided",
    "frombuffer",
    "is_inference",
    "to_dlpack",
    "typename",
]


def _np_dtype(dtype: Any) -> np.dtype:
    return _dtype.to_numpy(dtype if dtype is not None else _dtype.get_default_dtype())


def _finish(arr: np.ndarray, requires_grad: bool, device: Any) -> Tensor:
    """A tensor over ``arr`` on ``device`` (None: the default device; ``meta``: a meta tensor
    of ``arr``'s shape, strides and dtype)."""
    meta = _wants_meta(device)
    t = Tensor._make(_as_meta(arr) if meta else arr)
    return t.requires_grad_(True) if requires_grad else t


def empty_strided(
    size: Any,
    stride: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """An uninitialised tensor of ``size`` whose elements are ``stride`` elements apart per dim
    (``empty_strided((2, 3), (1, 2))`` is column-major)."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(
            f"mismatch in length of strides and shape: size has {len(size)} dims, stride has {len(stride)}"
        )
    if any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"empty_strided: sizes and strides must be non-negative, got {size} and {stride}")
    npd = _np_dtype(dtype)
    extent = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    base = np.empty(extent, dtype=npd)
    arr = np.lib.stride_tricks.as_strided(base, size, tuple(s * npd.itemsize for s in stride))
    return _finish(arr, requires_grad, device)


def new_empty_strided(
    self: Tensor,
    size: Any,
    stride: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """:func:`empty_strided` with this tensor's dtype (unless ``dtype`` is given)."""
    return empty_strided(
        size,
        stride,
        dtype=self.dtype if dtype is None else dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
        pin_memory=pin_memory,
    )


Tensor.new_empty_strided = new_empty_strided


def empty_permuted(
    size: Any,
    physical_layout: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """An uninitialised tensor of ``size`` stored in memory in the dim order ``physical_layout``
    (``empty_permuted((N, C, H, W), (0, 2, 3, 1))`` is channels-last)."""
    size, order = tuple(int(s) for s in size), tuple(int(d) for d in physical_layout)
    if sorted(order) != list(range(len(size))):
        raise RuntimeError(
            f"empty_permuted: physical_layout {order} is not a permutation of the "
            f"{len(size)} dims of size {size}"
        )
    stored = np.empty([size[d] for d in order], dtype=_np_dtype(dtype))
    return _finish(stored.transpose(np.argsort(order)), requires_grad, device)


def frombuffer(
    buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0, requires_grad: bool = False
) -> Tensor:
    """A 1-d tensor over the bytes of a buffer-protocol object (shared, not copied), from
    ``offset`` bytes, ``count`` elements (-1: all)."""
    npd = _np_dtype(dtype)
    nbytes = memoryview(buffer).nbytes
    if count == 0 or nbytes == 0:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if not 0 <= offset < nbytes:
        raise ValueError(
            f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
            f"({nbytes} bytes) minus 1"
        )
    if count < 0 and (nbytes - offset) % npd.itemsize:
        raise ValueError(
            f"buffer length ({nbytes - offset} bytes) after offset ({offset} bytes) must be a "
            f"multiple of element size ({npd.itemsize})"
        )
    if count > 0 and nbytes - offset < count * npd.itemsize:
        raise ValueError(
            f"requested buffer length ({count} * {npd.itemsize} bytes) after offset "
            f"({offset} bytes) must not be greater than actual buffer length ({nbytes} bytes)"
        )
    t = Tensor._make(np.frombuffer(buffer, dtype=npd, count=count, offset=offset))
    return t.requires_grad_(True) if requires_grad else t


def asarray(
    obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None, requires_grad: bool = False
) -> Tensor:
    """``obj`` as a tensor, sharing its memory when possible (a tensor, a NumPy array or an
    object with ``__array_interface__``/``__dlpack__``); ``copy=True`` always copies,
    ``copy=False`` raises ``ValueError`` if a copy would be needed."""
    if isinstance(obj, Tensor):
        out = obj if dtype is None or _dtype.to_numpy(dtype) == obj._data.dtype else obj.to(dtype)
        copied = out is not obj
    elif isinstance(obj, (UntypedStorage, TypedStorage)):  # its bytes, read as ``dtype``
        raw = obj.untyped()._bytes
        want = np.dtype(
            _dtype.to_numpy(dtype) if dtype is not None else getattr(obj, "dtype", _dtype.uint8).numpy
        )
        out, copied = Tensor._make(raw[: raw.size - raw.size % want.itemsize].view(want)), False
    elif any(hasattr(obj, a) for a in ("__array_interface__", "__array__", "__dlpack__")):
        src = np.asarray(obj)
        want = _dtype.to_numpy(dtype) if dtype is not None else src.dtype
        copied = want != src.dtype
        out = Tensor._make(src.astype(want) if copied else src)
    else:
        if copy is False:
            raise ValueError(
                f"can't alias a Python {type(obj).__name__} into a tensor: copy=False needs "
                "an object with memory to share (a tensor, a NumPy array)"
            )
        out, copied = _creation.tensor(obj, dtype=dtype), True
    if copy is False and copied:
        raise ValueError(
            f"can't alias the {type(obj).__name__} into a tensor of dtype {dtype}: "
            "copy=False, but the dtype differs"
        )
    if copy and not copied:
        out = out.clone()
    if device is not None:
        _check_device(device)
    return out.requires_grad_(True) if requires_grad and not out.requires_grad else out


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule sharing ``tensor``'s memory (for ``from_dlpack`` of another library)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'tensor' must be Tensor, not {type(tensor).__name__}")
    return tensor._data.__dlpack__()


def typename(obj: Any) -> str:
    """The type of ``obj`` as a string: a tensor's legacy type name (``'torch.FloatTensor'``),
    else ``module.QualifiedName`` (builtins without the module)."""
    if isinstance(obj, Tensor):
        return obj.type()
    if hasattr(obj, "__qualname__") or hasattr(obj, "__name__"):
        module = getattr(obj, "__module__", "") or ""
        name = getattr(obj, "__qualname__", None) or obj.__name__
    else:
        module, name = type(obj).__module__ or "", type(obj).__qualname__
    return name if module in ("", "builtins") else f"{module}.{name}"


def is_inference(input: Tensor) -> bool:
    """Whether ``input`` is an inference tensor (made inside ``inference_mode()``)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input._version_box is INFERENCE
