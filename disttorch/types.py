"""``torch.types``: the type aliases PyTorch's annotations use (``Number``, ``Device``,
``FileLike``, ``_size``, ``_TensorOrTensors``, ...), which libraries import for their own
annotations (transformers' ESMFold). No symbolic shapes here: the ``*LikeType`` aliases
are the plain Python types."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO, Union

from ._dtype import dtype as _dtype  # noqa: F401  (PyTorch names these aliases too)
from ._layout import layout as _layout  # noqa: F401
from ._qscheme import qscheme as _qscheme  # noqa: F401
from ._storage import UntypedStorage
from ._tensor import Size, Tensor
from ._tensor import device as _device
from .autograd.graph import GradientEdge

__all__ = ["Number", "Device", "FileLike", "Storage"]  # (PyTorch's order)

_bool = bool
_bytes = bytes
_complex = complex
_float = float
_int = int
_str = str

_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Union[Tensor, None]]]
_TensorOrTensorsOrGradEdge = Union[Tensor, Sequence[Tensor], GradientEdge, Sequence[GradientEdge]]
_size = Union[Size, list[int], tuple[int, ...]]
_symsize = _size
_dispatchkey = str
IntLikeType = int
FloatLikeType = float
BoolLikeType = bool
PySymType = Union[int, float, bool]
py_sym_types = (int, float, bool)
_Number = (bool, int, float)
Number = Union[int, float, bool]
Device = Union[_device, str, int, None]
Storage = UntypedStorage  # (a class, as PyTorch's: isinstance works)
FileLike = Union[str, os.PathLike, IO[bytes]]
