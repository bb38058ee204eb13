"""Helpers shared by the weight- and spectral-norm reparametrizations."""

from __future__ import annotations

from ..._tensor import Tensor
from ...autograd.function import named_node


def norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """2-norm of ``v`` over every dim but ``dim`` (kept, size 1 elsewhere); ``dim=-1``: the
    norm of the whole tensor (PyTorch's ``norm_except_dim``)."""
    if dim == -1:
        return (v * v).sum().sqrt()
    axes = tuple(i for i in range(v.ndim) if i != dim)
    return (v * v).sum(axes, keepdim=True).sqrt()


def weight_norm_value(g: Tensor, v: Tensor, dim: int) -> Tensor:
    """``v * g / ||v||`` with the norm over every dim but ``dim``."""
    return named_node(v * (g / norm_except_dim(v, dim)), "WeightNormInterfaceBackward0")


def as_matrix(weight: Tensor, dim: int) -> Tensor:
    """``weight`` as a matrix whose rows run along ``dim`` (spectral norm)."""
    if dim != 0:
        weight = weight.permute(dim, *[d for d in range(weight.ndim) if d != dim])
    return weight.reshape(weight.shape[0], -1)
