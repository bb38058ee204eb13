"""``torch.types``: the aliases PyTorch's own type hints use, which libraries import for theirs
(``Number``, ``_size``, ``Device``, ``FileLike``, ...). disttorch has no symbolic shapes, so the
``*LikeType`` aliases are the plain Python types."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO, Optional, Union

from ._dtype import dtype as _dtype
from ._layout import layout as _layout
from ._qscheme import qscheme as _qscheme
from ._storage import UntypedStorage as Storage
from ._tensor import Size, Tensor
from ._tensor import device as _device

__all__ = [
    "BoolLikeType",
    "Device",
    "FileLike",
    "FloatLikeType",
    "IntLikeType",
    "Number",
    "Storage",
    "_bool",
    "_bytes",
    "_complex",
    "_device",
    "_dtype",
    "_float",
    "_int",
    "_layout",
    "_qscheme",
    "_size",
    "_str",
    "_symsize",
]

_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Optional[Tensor], Sequence[Optional[Tensor]]]
_size = Union[Size, list[int], tuple[int, ...]]
_symsize = _size
_int, _float, _bool, _complex, _str, _bytes = int, float, bool, complex, str, bytes
IntLikeType, FloatLikeType, BoolLikeType = int, float, bool
_Number = (int, float, bool)
Number = Union[int, float, bool]
Device = Optional[Union[_device, str, int]]
FileLike = Union[str, os.PathLike, IO[bytes]]
