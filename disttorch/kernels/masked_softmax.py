"""PyTorch's CPU masked softmax (``torch._masked_softmax``, which the inference fast path of
``nn.MultiheadAttention`` runs with boolean masks) over the last dim of a float16/bfloat16
array, step by step as its scalar loop rounds: the maximum over the visible entries,
``x - max`` and its ``exp`` each rounded to the 16-bit type, their float32 sum taken in
order, its reciprocal rounded to the 16-bit type, and the product rounded. A row with no
visible entry is NaN, as there."""

from __future__ import annotations

import numpy as np

__all__ = ["masked_softmax_16_bit"]


def masked_softmax_16_bit(x: np.ndarray, hidden: np.ndarray) -> np.ndarray:
    """Softmax of ``x`` along its last dim over the entries where ``hidden`` (broadcast to
    ``x``'s shape) is False; hidden entries get 0."""
    low = x.dtype
    hidden = np.broadcast_to(hidden, x.shape)
    wide = x.astype(np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        top = np.where(hidden, -np.inf, wide).max(axis=-1, keepdims=True)
        top = np.where(hidden.all(axis=-1, keepdims=True), wide[..., :1], top)  # (NaN rows after)
        z = np.exp((wide - top).astype(low).astype(np.float32)).astype(low).astype(np.float32)
        z[hidden] = 0.0
        total = np.add.accumulate(z, axis=-1, dtype=np.float32)[..., -1:]  # in order, as the loop adds
        inverse = (np.float32(1.0) / total).astype(low).astype(np.float32)
        return (z * inverse).astype(low)
