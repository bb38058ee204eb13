"""``GradBucket``: what DDP hands a communication hook (``torch.distributed.GradBucket``)."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor

__all__ = ["GradBucket"]


class GradBucket:
    """One bucket handed to a communication hook: the flat gradient buffer of some
    parameters, in the same order on every rank."""

    def __init__(self, index: int, buffer: np.ndarray, params: list, offsets: list, is_last: bool) -> None:
        self._index, self._buffer, self._params = index, buffer, params
        self._offsets, self._is_last = offsets, is_last

    def index(self) -> int:
        """Position of this bucket in the launch order (0 is launched first)."""
        return self._index

    def buffer(self) -> Tensor:
        """The flat gradients as one tensor (shares memory with the bucket)."""
        return Tensor._make(self._buffer)

    def set_buffer(self, tensor: Tensor) -> None:
        """Replace the bucket's contents with ``tensor`` (same number of elements)."""
        np.copyto(self._buffer, tensor._data.reshape(-1).astype(self._buffer.dtype, copy=False))

    def gradients(self) -> list[Tensor]:
        """Per-parameter views of the buffer, shaped like the parameters."""
        return [
            Tensor._make(self._buffer[o : o + p._data.size].reshape(p._data.shape))
            for p, o in zip(self._params, self._offsets)
        ]

    def parameters(self) -> list[Tensor]:
        return list(self._params)

    def is_last(self) -> bool:
        return self._is_last
