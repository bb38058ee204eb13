"""``F.embedding(indices, weight)`` with a sharded table.

- ``weight`` cut by rows (``Shard(0)``, PyTorch's rowwise embedding): every rank looks up
  the indices that fall in its rows, writes zeros for the others (a masked lookup), and
  the output is ``Partial("sum")``: reducing it gives the whole lookup.
- ``weight`` cut by columns (``Shard(1)``): each rank looks up its columns; the output is
  ``Shard`` of its last dimension.
- ``weight`` replicated: the output follows the indices' layout.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...._tensor import Tensor
from .._op_schema import OpCall, OpStrategy, register
from .._utils import compute_local_shape_and_global_offset
from ..placement_types import Partial, Placement, Replicate, Shard

__all__ = ["embedding"]


def _masked_lookup(op: type, rows: tuple[int, int]) -> Any:
    """The local computation of a rowwise-sharded lookup: rows ``[start, stop)`` live here."""
    start, stop = rows

    def compute(indices: Tensor, weight: Tensor, padding_idx: Any, *rest: Any) -> Tensor:
        idx = indices._data
        here = (idx >= start) & (idx < stop)
        local = Tensor._make(np.where(here, idx - start, 0))
        pad = padding_idx - start if padding_idx is not None and start <= padding_idx < stop else None
        out = op.apply(local, weight, pad, *rest)
        return out * Tensor._make(here[..., None].astype(out._data.dtype))

    return compute


@register("EmbeddingFunction")
def embedding(call: OpCall) -> OpStrategy:
    indices, weight = call.specs[0], call.specs[1]
    shape = indices.shape + weight.shape[1:]
    idx_layout: list[Placement] = []
    w_layout: list[Placement] = []
    output: list[Placement] = []
    for m in range(call.mesh.ndim):
        w, i = weight.placements[m], indices.placements[m]
        if w.is_shard(0) or w.is_partial():
            idx_layout.append(Replicate())
            w_layout.append(w)
            output.append(Partial() if w.is_shard() else w)
        elif w.is_shard(1):
            idx_layout.append(Replicate())
            w_layout.append(w)
            output.append(Shard(len(shape) - 1))
        else:
            idx_layout.append(i)
            w_layout.append(Replicate())
            output.append(i)
    strategy = OpStrategy({0: tuple(idx_layout), 1: tuple(w_layout)}, tuple(output), shape)
    if any(p.is_shard(0) for p in w_layout):
        local, offset = compute_local_shape_and_global_offset(weight.shape, call.mesh, w_layout)
        strategy.compute = _masked_lookup(call.op, (offset[0], offset[0] + local[0]))
    return strategy
