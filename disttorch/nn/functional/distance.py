"""Distances between batches of vectors: ``cosine_similarity`` and ``pairwise_distance``,
built from core ops (so they differentiate to any order)."""

from __future__ import annotations

import numpy as np

from ..._tensor import Tensor
from ...autograd.forward_ad import refuse_tangents
from ...autograd.function import named_node
from ...autograd.grad_reads import reads_inputs
from ...ops import elementwise as _ew

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim`` (the inputs
    broadcast against each other)."""
    shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    x1, x2 = x1.expand(shape), x2.expand(shape)
    n1 = _ew.clamp_min(x1.norm(dim=dim, keepdim=True), eps)
    n2 = _ew.clamp_min(x2.norm(dim=dim, keepdim=True), eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last dim."""
    shifted = named_node(x1 - x2 + eps, "AddBackward1")  # (PyTorch's nodes: add of a Scalar, norm)
    return named_node(shifted.norm(p=p, dim=-1, keepdim=keepdim), "NormBackward1")


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm distance between every pair of rows ``i < j`` of ``(N, M)`` input:
    the upper triangle of the distance matrix, row by row, as a 1-D tensor of ``N(N-1)/2``."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    # PyTorch's _pdist_forward: no forward rule, and its backward (_pdist_backward) has no derivative
    refuse_tangents("_pdist_forward", input)
    i, j = np.triu_indices(input.shape[0], k=1)
    with np.errstate(invalid="ignore"):  # (inf - inf: NaN, as PyTorch's, without a warning)
        diff = (input[Tensor._make(i)] - input[Tensor._make(j)]).abs()
    if p == 0:
        return (diff != 0).sum(-1).to(input.dtype)
    if p == float("inf"):
        out = diff.amax(-1) if diff.shape[0] else diff.sum(-1)
    else:
        total = diff.pow(p).sum(-1)
        nonzero = total != 0  # the root has no derivative at 0: identical rows get 0, as PyTorch (NaN stays)
        safe = _ew.where(nonzero, total, Tensor._make(np.ones((), dtype=total._data.dtype)))
        out = _ew.where(nonzero, safe.pow(1.0 / p), Tensor._make(np.zeros((), dtype=total._data.dtype)))
    return reads_inputs(out, "'_pdist_backward'")
