"""Padding layers: ``ZeroPad``, ``ConstantPad``, ``ReflectionPad``, ``ReplicationPad`` and
``CircularPad``, each in 1-, 2- and 3-d (``F.pad`` with a fixed mode and amounts)."""

from __future__ import annotations

from collections.abc import Sequence

from ..._tensor import Tensor
from ..functional.padding import pad
from .module import Module

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


class _PadNd(Module):
    """``padding``: an int (every side) or ints (last dim first, before/after): usually ``2 * d``,
    but kept as given and checked by ``F.pad`` at forward, as PyTorch does."""

    _dims = 1
    _mode = "constant"

    def __init__(self, padding: int | Sequence[int], value: float = 0.0) -> None:
        super().__init__()
        d = self._dims
        if isinstance(padding, int):
            self.padding = (padding,) * (2 * d)
        else:
            self.padding = tuple(int(p) for p in padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        if self._mode == "constant":
            return pad(input, self.padding, "constant", self.value)
        return pad(input, self.padding, self._mode)  # F.pad checks the sizes, as in PyTorch

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: int | Sequence[int], value: float) -> None:
        super().__init__(padding, value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_PadNd):
    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__(padding, 0.0)


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dim with zeros; ``padding`` is an int or 2 ints (last dim first)."""

    _dims = 1


class ZeroPad2d(_ZeroPadNd):
    """Pad the last 2 dims with zeros; ``padding`` is an int or 4 ints (last dim first)."""

    _dims = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last 3 dims with zeros; ``padding`` is an int or 6 ints (last dim first)."""

    _dims = 3


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``; ``padding`` is an int or 2 ints (last dim first)."""

    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with ``value``; ``padding`` is an int or 4 ints (last dim first)."""

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with ``value``; ``padding`` is an int or 6 ints (last dim first)."""

    _dims = 3


class ReflectionPad1d(_PadNd):
    """Pad the last dim with the reflection of the input (edge not repeated); ``padding`` is an int or 2 ints (last dim first)."""

    _dims = 1
    _mode = "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last 2 dims with the reflection of the input (edge not repeated); ``padding`` is an int or 4 ints (last dim first)."""

    _dims = 2
    _mode = "reflect"


class ReflectionPad3d(_PadNd):
    """Pad the last 3 dims with the reflection of the input (edge not repeated); ``padding`` is an int or 6 ints (last dim first)."""

    _dims = 3
    _mode = "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dim with copies of the edge value; ``padding`` is an int or 2 ints (last dim first)."""

    _dims = 1
    _mode = "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last 2 dims with copies of the edge value; ``padding`` is an int or 4 ints (last dim first)."""

    _dims = 2
    _mode = "replicate"


class ReplicationPad3d(_PadNd):
    """Pad the last 3 dims with copies of the edge value; ``padding`` is an int or 6 ints (last dim first)."""

    _dims = 3
    _mode = "replicate"


class CircularPad1d(_PadNd):
    """Pad the last dim with the input wrapped around; ``padding`` is an int or 2 ints (last dim first)."""

    _dims = 1
    _mode = "circular"


class CircularPad2d(_PadNd):
    """Pad the last 2 dims with the input wrapped around; ``padding`` is an int or 4 ints (last dim first)."""

    _dims = 2
    _mode = "circular"


class CircularPad3d(_PadNd):
    """Pad the last 3 dims with the input wrapped around; ``padding`` is an int or 6 ints (last dim first)."""

    _dims = 3
    _mode = "circular"
