"""``embedding_bag``: sums, means or maxima of bags of embedding rows without a Python
loop over bags: sums and means gather the rows of all bags at once and add each bag's run
with one segmented sum (``BagSum``); maxima lay the bags out as one padded
``(B, longest, D)`` gather with a validity mask and reduce along the bag axis."""

from __future__ import annotations

import numpy as np

from ..._tensor import Tensor
from ...autograd import grad_mode
from ...autograd.function import Function, named_node
from ...ops import elementwise as _ew
from .sparse import _padding_index, _renorm_rows, embedding

__all__ = ["embedding_bag"]

_NODE = "EmbeddingBagBackward0"  # PyTorch's one node for the whole bag reduction


def _bags(input: np.ndarray, offsets: np.ndarray | None, include_last_offset: bool) -> tuple:
    """Flat indices and per-bag (start, end) ranges."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}"
            )
        b, n = input.shape
        starts = np.arange(b) * n
        return input.reshape(-1), starts, starts + n
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    offsets = offsets.astype(np.int64)
    if offsets.size and offsets[0] != 0:
        raise RuntimeError(
            f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
            f"start from position 0. However, got {int(offsets[0])}"
        )
    if offsets.size and offsets[-1] > input.size:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length ({input.size}), but got "
            f"offsets[-1] of {int(offsets[-1])}"
        )
    if include_last_offset:
        return input, offsets[:-1], offsets[1:]
    return input, offsets, np.append(offsets[1:], input.size)


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """Reduce bags of embedding rows: ``input`` is ``(B, N)`` (fixed-size bags) or 1-D with
    ``offsets`` giving each bag's start. ``mode`` is ``'sum'``, ``'mean'`` or ``'max'``;
    ``per_sample_weights`` (``'sum'`` only) scales each row; rows at ``padding_idx`` are
    left out (an empty bag gives zeros). ``scale_grad_by_freq`` (not with ``'max'``) divides
    each row's gradient by its index's frequency in ``input``; ``sparse=True`` makes
    ``weight.grad`` a sparse COO tensor."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode}")
    if scale_grad_by_freq and mode == "max":
        raise ValueError("embedding_bag: scale_grad_by_freq is not supported with mode='max'")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(
                f"embedding_bag: per_sample_weights was not None. per_sample_weights "
                f"is only supported for mode='sum' (got mode='{mode}'). Please open a "
                f"feature request on GitHub."
            )
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(
                f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is "
                f"not None, then it must have the same shape as the input ({list(input.shape)})"
            )
    idx = np.asarray(input._data)
    if idx.dtype.kind not in "iu":
        raise RuntimeError(
            f"Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {input.dtype} instead"
        )
    flat, starts, ends = _bags(
        idx, None if offsets is None else np.asarray(offsets._data), include_last_offset
    )
    flat = flat.astype(np.int64)
    padding_idx = _padding_index(padding_idx, weight.shape[0])
    if max_norm is not None:
        with grad_mode.no_grad():
            _renorm_rows(weight, flat, max_norm, norm_type)
    if mode == "max":
        return named_node(_bag_max(flat, starts, ends, weight, padding_idx, sparse), _NODE)
    # sum / mean: the rows of every kept index, in bag order, then one segmented sum
    lengths = ends - starts
    bag_of = np.repeat(np.arange(len(starts)), lengths)
    # position in ``flat`` of each bag slot: its bag's start plus its rank inside the bag
    pos = np.arange(bag_of.size) + np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    kept = flat[pos]
    keep = kept != padding_idx if padding_idx is not None else np.ones(kept.shape, bool)
    pos, kept, bag_of = pos[keep], kept[keep], bag_of[keep]
    rows = embedding(Tensor._make(kept), weight, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1)[Tensor._make(pos)].unsqueeze(-1)
    total = BagSum.apply(rows, bag_of, len(starts))
    if mode == "sum":
        return named_node(total, _NODE)
    count = np.maximum(np.bincount(bag_of, minlength=len(starts)), 1).astype(weight._data.dtype)[:, None]
    return named_node(total / Tensor._make(count), _NODE)


class BagSum(Function):
    """Sum the rows ``(K, D)`` of each bag (``bag_of``, non-decreasing) into ``(B, D)``,
    empty bags zero: one ``np.add.reduceat``. Backward hands each row its bag's gradient."""

    _raw = True

    @staticmethod
    def forward(ctx, rows, bag_of, n_bags):
        r = rows._data
        ctx.bag_of = bag_of
        if (
            n_bags
            and bag_of.size == r.shape[0]
            and bag_of.size % n_bags == 0
            and np.array_equal(bag_of, np.repeat(np.arange(n_bags), bag_of.size // n_bags))
        ):
            return r.reshape((n_bags, -1) + r.shape[1:]).sum(axis=1)  # equal bags: one reshape
        out = np.zeros((n_bags,) + r.shape[1:], dtype=r.dtype)
        if bag_of.size:
            bags, starts = np.unique(bag_of, return_index=True)
            out[bags] = np.add.reduceat(r, starts, axis=0)
        return out

    @staticmethod
    def backward(ctx, g):
        return g.index_select(0, Tensor._make(ctx.bag_of)), None, None


def _bag_max(
    flat: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    weight: Tensor,
    padding_idx: int | None,
    sparse: bool,
) -> Tensor:
    """Per-bag maximum over a padded ``(B, longest, D)`` gather (empty bags give zeros)."""
    lengths = ends - starts
    b, longest = len(starts), int(lengths.max()) if len(starts) else 0
    slot = starts[:, None] + np.arange(longest)[None, :]
    valid = np.arange(longest)[None, :] < lengths[:, None]
    gather = np.where(valid, np.minimum(slot, max(flat.size - 1, 0)), 0)
    picked = flat[gather] if flat.size else np.zeros((b, longest), np.int64)
    if padding_idx is not None:
        valid &= picked != padding_idx
    zero = Tensor._make(np.zeros((), dtype=weight._data.dtype))
    if not longest:
        return Tensor._make(np.zeros((b, weight.shape[1]), weight._data.dtype))
    rows = embedding(Tensor._make(np.where(valid, picked, 0)), weight, sparse=sparse)  # (B, longest, D)
    low = Tensor._make(np.asarray(-np.inf, dtype=weight._data.dtype))
    best = (rows if valid.all() else _ew.where(Tensor._make(valid[..., None]), rows, low)).amax(1)
    return _ew.where(Tensor._make(valid.any(axis=1)[:, None]), best, zero)
