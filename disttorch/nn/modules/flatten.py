"""``Flatten`` and ``Unflatten``: reshape a range of dims into one, and one dim into several."""

from __future__ import annotations

from typing import Sequence

from ..._tensor import Tensor, _wrap_dim
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Merge dims ``start_dim`` .. ``end_dim`` into one (default: all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size`` (one entry may be -1)."""

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(
                f"unflattened_size must be tuple of ints, but found type {type(unflattened_size).__name__}"
            )
        self.dim, self.unflattened_size = dim, unflattened_size  # (a list stays a list, as PyTorch)

    def forward(self, input: Tensor) -> Tensor:
        shape = input.shape
        d = _wrap_dim(self.dim, len(shape))
        sizes = list(self.unflattened_size)
        known = 1
        for s in sizes:
            if s != -1:
                known *= s
        if -1 in sizes:
            sizes[sizes.index(-1)] = shape[d] // known if known else 0
        elif known != shape[d]:
            raise RuntimeError(
                f"unflatten: Provided sizes {list(self.unflattened_size)} don't "
                f"multiply up to the size of dim {self.dim} ({shape[d]}) in the "
                f"input tensor"
            )
        return input.reshape(*shape[:d], *sizes, *shape[d + 1 :])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
