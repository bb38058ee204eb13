"""Flatten parameters into one vector and back (``parameters_to_vector``,
``vector_to_parameters``)."""
from __future__ import annotations

from typing import Iterable

import numpy as np

from ..._tensor import Tensor
from ...autograd.function import Function

__all__ = ["parameters_to_vector", "vector_to_parameters"]


class _FlattenConcat(Function):
    """All inputs flattened and concatenated; backward hands each its slice, reshaped."""

    _raw = True

    @staticmethod
    def forward(ctx, *tensors):
        ctx.shapes = [t._data.shape for t in tensors]
        return np.concatenate([t._data.reshape(-1) for t in tensors])

    @staticmethod
    def backward(ctx, g):
        grads, offset = [], 0
        for shape in ctx.shapes:
            n = int(np.prod(shape))
            grads.append(g[offset:offset + n].reshape(shape))
            offset += n
        return tuple(grads)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """One 1-D tensor holding every parameter's values, in order (differentiable)."""
    return _FlattenConcat.apply(*parameters)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters`` (in place, no graph)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    flat = vec._data
    offset = 0
    for p in parameters:
        n = p._data.size
        if offset + n > flat.size:
            raise RuntimeError(f"vector_to_parameters: the vector has {flat.size} entries, fewer "
                               f"than the parameters need")
        np.copyto(p._data, flat[offset:offset + n].reshape(p._data.shape), casting="unsafe")
        p._bump_version()
        offset += n
