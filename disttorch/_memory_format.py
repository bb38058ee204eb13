"""``torch.memory_format`` and its values (``contiguous_format``, ``channels_last``,
``channels_last_3d``, ``preserve_format``; ``legacy_contiguous_format`` is
``contiguous_format``), accepted wherever PyTorch takes ``memory_format=``.

disttorch keeps dense tensors in row-major (C) order; ``empty_permuted`` and
``empty_strided`` give other physical layouts, which every op reads correctly.
"""

from __future__ import annotations

__all__ = [
    "channels_last",
    "channels_last_3d",
    "contiguous_format",
    "legacy_contiguous_format",
    "memory_format",
    "preserve_format",
]


class memory_format:
    """A memory layout of a dense tensor, shown as ``torch.<name>``."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self) -> str:
        return self._name  # pickles as the module-level singleton


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
legacy_contiguous_format = contiguous_format
