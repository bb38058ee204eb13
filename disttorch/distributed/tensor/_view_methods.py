"""DTensor's view methods, which take the whole tensor's sizes as PyTorch's do.

A plain tensor's ``view``/``reshape``/``flatten``/... work out the new shape from the
tensor's own memory; a DTensor's memory is only its piece, so here the new shape is
worked out from the global shape (with the same helpers of ``ops.shape``) and handed to
the same view op, whose sharding rule (``_ops/_views.py``) turns it into the piece's.
The module functions (``torch.reshape(dt, ...)``) call these methods (``ops.method_twins``).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from ..._dtype import dtype as _dtype_cls
from ...ops import shape as shape_ops
from ...ops.shape import Narrow, Split, Squeeze, UnsafeView, Unsqueeze, View

__all__ = ["GlobalViewMethods"]


class GlobalViewMethods:
    """View methods in global sizes; mixed into ``DTensor`` ahead of ``Tensor``."""

    shape: Any
    _data: Any

    def _global_numel(self) -> int:
        return math.prod(self.shape)

    def view(self, *shape: Any, size: Sequence[int] | None = None, dtype: Any = None) -> Any:
        """A view with a new global shape (``-1`` inferred from the global size)."""
        if dtype is not None or (len(shape) == 1 and isinstance(shape[0], _dtype_cls)):
            return shape_ops.view(self, *shape, size=size, dtype=dtype)  # a dtype view
        sizes = shape_ops._shape_arg(shape_ops._positional_or_keyword("view", shape, "size", size))
        return View.apply(self, shape_ops._infer_shape(sizes, self._global_numel()))

    def reshape(self, *sizes: Any, shape: Sequence[int] | None = None) -> Any:
        """The same elements in a new global shape (a view of the piece when it is contiguous)."""
        new = shape_ops._shape_arg(shape_ops._positional_or_keyword("reshape", sizes, "shape", shape))
        new = shape_ops._infer_shape(new, self._global_numel())
        return (View if self._data.flags.c_contiguous else UnsafeView).apply(self, new)

    def view_as(self, other: Any) -> Any:
        return self.view(tuple(other.shape))

    def reshape_as(self, other: Any) -> Any:
        return self.reshape(tuple(other.shape))

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Any:
        new = shape_ops.flattened_shape(tuple(self.shape), start_dim, end_dim)
        return self if new is None else self.reshape(new)

    def unflatten(self, dim: int, sizes: Sequence[int]) -> Any:
        return self.reshape(shape_ops.unflattened_shape(tuple(self.shape), dim, sizes))

    def unsqueeze(self, dim: int) -> Any:
        d = shape_ops.wrap_dim(dim, len(self.shape) + 1)
        return Unsqueeze.apply(self, shape_ops.unsqueezed_shape(tuple(self.shape), d), d)

    def squeeze(self, dim: Any = None) -> Any:
        return Squeeze.apply(self, shape_ops.squeezed_shape(tuple(self.shape), dim))

    def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple:
        """Consecutive pieces along ``dim``, sized in global sizes."""
        d, sizes = shape_ops.split_sizes(tuple(self.shape), split_size_or_sections, dim)
        op = shape_ops.split_kind(split_size_or_sections)
        if len(sizes) == 1:
            return shape_ops._mark_views((Narrow.apply(self, d, 0, sizes[0]),), self, op)
        return shape_ops._mark_views(Split.apply(self, tuple(sizes), d), self, op)

    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        return self.split(shape_ops.chunk_split_arg(tuple(self.shape), chunks, dim), dim)
