"""DLPack exchange (``torch.utils.dlpack``'s names): ``from_dlpack`` and ``to_dlpack``.

A tensor of any library that implements ``__dlpack__`` on the CPU (PyTorch, NumPy, JAX,
CuPy's host arrays, ...) becomes a disttorch tensor sharing its memory, through NumPy's
DLPack support; ``Tensor.__dlpack__`` makes disttorch's tensors consumable the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor, _check_device

__all__ = ["from_dlpack", "to_dlpack"]


def from_dlpack(ext_tensor: Any, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """A disttorch tensor sharing memory with ``ext_tensor`` (an object with ``__dlpack__``);
    ``copy=True`` copies it, ``copy=False`` refuses to; ``device`` must be the CPU.

    Raises:
        TypeError: ``ext_tensor`` does not implement ``__dlpack__`` (raw capsules are not
            accepted: pass the tensor itself).
        BufferError: the producer cannot export to the CPU (e.g. a GPU tensor), or
            ``copy=False`` and it cannot be shared.
    """
    if device is not None:
        _check_device(device)
    if isinstance(ext_tensor, Tensor):
        return ext_tensor.clone() if copy else ext_tensor
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(
            f"from_dlpack expects an object with __dlpack__ (a tensor of another "
            f"library), got {type(ext_tensor).__name__}"
        )
    return Tensor._make(np.from_dlpack(ext_tensor, copy=copy))


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule of ``tensor``'s memory (prefer passing the tensor itself to the consumer)."""
    return tensor.__dlpack__()
