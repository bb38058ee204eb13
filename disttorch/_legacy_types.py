"""PyTorch's legacy tensor types: ``torch.FloatTensor``, ``torch.LongTensor``, ...

Each is a class of metaclass :class:`tensortype` (as in PyTorch, not a subclass of
``Tensor``): calling it builds a tensor of its dtype (``FloatTensor(2, 3)`` uninitialised,
``FloatTensor([1, 2])`` from data, ``FloatTensor(size=(2, 3))``), ``isinstance(t,
torch.FloatTensor)`` is true for float32 tensors, and ``t.type(torch.LongTensor)``
converts. The ``torch.cuda.*Tensor`` types exist and raise TypeError when used, as on a
CPU build.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dtype, _native_warnings
from ._ndarray_sequences import warn_if_holds_ndarrays
from ._no_device import HINT
from ._storage import is_storage, storage_elements
from ._tensor import Size, Tensor

__all__ = [
    "BFloat16Tensor",
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "ShortTensor",
    "cuda_types",
    "tensortype",
]


class tensortype(type):
    """Metaclass of the legacy tensor types."""

    dtype: _dtype.dtype
    is_cuda: bool

    def __instancecheck__(cls, obj: Any) -> bool:
        return not cls.is_cuda and isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__name__}'>"

    def __call__(cls, *args: Any, size: Any = None, device: Any = None) -> Tensor:
        if cls.is_cuda:
            raise TypeError(
                f"type {cls.__module__}.{cls.__name__} not available. Torch not compiled with "
                "CUDA enabled." + HINT
            )
        if device is not None:
            from ._tensor import _check_device

            _check_device(device)
        np_dt = cls.dtype.numpy
        if size is not None:
            if args:
                raise TypeError(f"{cls.__name__}() got multiple values for argument 'size'")
            args = tuple(size)
        if len(args) == 1 and isinstance(args[0], Tensor):
            if args[0].dtype != cls.dtype:
                raise TypeError(f"expected {cls.dtype} (got {args[0].dtype})")
            return args[0].detach()
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args) or (
            len(args) == 1 and isinstance(args[0], Size)
        ):
            shape = (
                tuple(args[0])
                if len(args) == 1 and isinstance(args[0], Size)
                else tuple(int(a) for a in args)
            )
            return Tensor._make(np.empty(shape, dtype=np_dt))
        if len(args) != 1:
            raise TypeError(
                f"{cls.__name__}(): expected sizes (ints) or one sequence of data, got "
                f"{', '.join(type(a).__name__ for a in args)}"
            )
        data = args[0]
        if is_storage(data):
            return Tensor._make(storage_elements(data, cls.dtype))  # sharing its memory
        if not isinstance(data, (list, tuple, np.ndarray)):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        arr = np.array(data, dtype=np_dt)
        warn_if_holds_ndarrays(data, arr.size)
        return Tensor._make(arr)


def _make(name: str, dt: _dtype.dtype, module: str, is_cuda: bool) -> tensortype:
    doc = (
        f"``{module}.{name}``: legacy constructor of {dt} tensors, and ``isinstance`` check."
        if not is_cuda
        else f"``{module}.{name}``: unavailable (no CUDA); raises TypeError."
    )
    return tensortype(name, (), {"dtype": dt, "is_cuda": is_cuda, "__module__": module, "__doc__": doc})


_NAMES = (
    ("FloatTensor", _dtype.float32),
    ("DoubleTensor", _dtype.float64),
    ("HalfTensor", _dtype.float16),
    ("LongTensor", _dtype.int64),
    ("IntTensor", _dtype.int32),
    ("ShortTensor", _dtype.int16),
    ("CharTensor", _dtype.int8),
    ("ByteTensor", _dtype.uint8),
    ("BoolTensor", _dtype.bool),
    ("BFloat16Tensor", _dtype.bfloat16),
)

(
    FloatTensor,
    DoubleTensor,
    HalfTensor,
    LongTensor,
    IntTensor,
    ShortTensor,
    CharTensor,
    ByteTensor,
    BoolTensor,
    BFloat16Tensor,
) = (_make(n, d, "torch", False) for n, d in _NAMES)
_TYPES = (
    FloatTensor,
    DoubleTensor,
    HalfTensor,
    LongTensor,
    IntTensor,
    ShortTensor,
    CharTensor,
    ByteTensor,
    BoolTensor,
    BFloat16Tensor,
)
cuda_types = {n: _make(n, d, "torch.cuda", True) for n, d in _NAMES}


def set_default_tensor_type(t: tensortype | str) -> None:
    """Deprecated (as in PyTorch 2.1+, with its warning): set the default floating dtype
    from a legacy type (``torch.DoubleTensor``) or its name (``"torch.DoubleTensor"``)."""
    _native_warnings.warn(
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives. (Triggered internally "
        "at /__w/pytorch/pytorch/torch/csrc/tensor/python_tensor.cpp:434.)",
        once=True,
    )
    if isinstance(t, str):
        by_name = {f"{cls.__module__}.{cls.__name__}": cls for cls in (*_TYPES, *cuda_types.values())}
        if t not in by_name:
            raise TypeError(f"invalid type: '{t}'")
        t = by_name[t]
    if not isinstance(t, tensortype):
        raise TypeError(f"invalid type: {t!r} (expected a legacy tensor type such as torch.DoubleTensor)")
    if t.is_cuda:
        t()  # raises: not available
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(t.dtype)
