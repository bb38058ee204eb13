"""``torch.types``: the type aliases PyTorch programs annotate with (``Number``, ``Device``,
``_size``, ...). disttorch has no symbolic shapes, so the ``Sym*``-like aliases are the plain
Python number types."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO, Union

from . import _dtype as _dtypes
from . import _layout as _layouts
from . import _qscheme as _qschemes
from ._tensor import Size, Tensor, device
from .storage import UntypedStorage as Storage

__all__ = ["Number", "Device", "FileLike", "Storage"]

_int, _float, _bool, _complex, _str, _bytes = int, float, bool, complex, str, bytes
_dtype, _device, _layout, _qscheme = _dtypes.dtype, device, _layouts.layout, _qschemes.qscheme
_Number = (int, float, bool)
Number = Union[int, float, bool]
Device = Union[device, str, int, None]
FileLike = Union[str, os.PathLike, IO[bytes]]
_size = Union[Size, list[int], tuple[int, ...]]
_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Union[Tensor, None]]]
IntLikeType, FloatLikeType, BoolLikeType = int, float, bool
PySymType = Union[int, float, bool]
_symsize = Union[Size, Sequence[int]]
py_sym_types: tuple = ()
