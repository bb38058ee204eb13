"""Flatten parameters into one vector and back (``parameters_to_vector``,
``vector_to_parameters``)."""

from __future__ import annotations

from typing import Iterable

import numpy as np

from ..._tensor import Tensor
from ...ops.shape import cat

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """One 1-D tensor holding every parameter's values, in order (differentiable)."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters`` (in place, no graph)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected disttorch.Tensor, but got: {type(vec).__name__}")
    flat = vec._data
    offset = 0
    for p in parameters:
        n = p._data.size
        if offset + n > flat.size:
            raise RuntimeError(
                f"vector_to_parameters: the vector has {flat.size} entries, fewer than the parameters need"
            )
        np.copyto(p._data, flat[offset : offset + n].reshape(p._data.shape), casting="unsafe")
        p._bump_version()
        offset += n
