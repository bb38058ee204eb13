"""Matrix products: ``F.linear`` (``x @ W.T + b``) and ``matmul`` (``mm``, ``bmm``, ``@``).

A product is described by where each input dimension goes: to an output dimension, or
into the contraction. Along one mesh dimension, the first input that is sharded decides:

- sharded on a contracted dimension: every input is cut along its contracted dimension,
  each rank multiplies its pieces and the output is ``Partial("sum")`` (the bias, which
  is added, becomes a summand too: ``b / n`` per rank, as PyTorch does);
- sharded on a dimension that reaches the output (rows of ``x``, columns of ``W``, a
  batch dimension): inputs holding that output dimension are cut along it, the others
  replicated, and the output is ``Shard`` of it;
- one ``Partial`` input with the others replicated: the output is ``Partial`` too.

Anything else (several partial inputs) is reduced to replicated first.
"""

from __future__ import annotations

import numpy as np

from .._op_schema import OpCall, OpStrategy, TensorSpec, register
from ..placement_types import Partial, Placement, Replicate, Shard

__all__ = ["linear", "matmul"]

CONTRACTED = "contracted"


def _contraction(
    call: OpCall, dims: dict[int, dict[int, object]], shape: tuple[int, ...], addend: int | None = None
) -> OpStrategy:
    """The strategy for a product whose input ``i`` sends its dimension ``d`` to
    ``dims[i][d]`` (an output dimension or :data:`CONTRACTED`); ``addend`` is an input that
    is added to the product (the bias)."""
    specs = call.specs
    inputs: dict[int, list[Placement]] = {i: [] for i in specs}
    output: list[Placement] = []

    def full(i: int, d: int, out: int) -> bool:
        return specs[i].shape[d] == shape[out]

    for m in range(call.mesh.ndim):
        lead = next((i for i in dims if specs[i].placements[m].is_shard()), None)
        partial = [i for i in dims if i != addend and specs[i].placements[m].is_partial()]
        if lead is not None and dims[lead][specs[lead].placements[m].dim] == CONTRACTED:
            for i, dmap in dims.items():
                cut = next((d for d, o in dmap.items() if o == CONTRACTED), None)
                inputs[i].append(Shard(cut) if cut is not None else Partial())
            output.append(Partial())
        elif lead is not None:
            out = dims[lead][specs[lead].placements[m].dim]
            for i, dmap in dims.items():
                cut = next((d for d, o in dmap.items() if o == out and full(i, d, out)), None)
                inputs[i].append(Shard(cut) if cut is not None else Replicate())
            output.append(Shard(out))
        elif partial:  # the first partial factor stays a summand; the bias becomes one too
            summand = specs[partial[0]].placements[m]
            for i in dims:
                inputs[i].append(summand if i in (partial[0], addend) else Replicate())
            output.append(summand)
        else:
            for i in dims:
                inputs[i].append(Replicate())
            output.append(Replicate())
    return OpStrategy({i: tuple(p) for i, p in inputs.items()}, tuple(output), shape)


@register("LinearFunction")
def linear(call: OpCall) -> OpStrategy:
    """``F.linear(x, W, b)``: ``x``'s last dimension and ``W``'s dim 1 are contracted."""
    x, w = call.specs[0], call.specs[1]
    nd = x.ndim
    dims: dict[int, dict[int, object]] = {
        0: {d: (CONTRACTED if d == nd - 1 else d) for d in range(nd)},
        1: {0: nd - 1, 1: CONTRACTED},
    }
    if 2 in call.specs:
        dims[2] = {0: nd - 1}
    return _contraction(call, dims, x.shape[:-1] + w.shape[:1], addend=2 if 2 in call.specs else None)


def _matrix_dims(spec: TensorSpec, out_nd: int, contracted: int) -> dict[int, object]:
    """Where a matmul operand's dimensions go: batch dimensions to the output's
    (right-aligned), the contracted one nowhere, the remaining one to the output's row or column."""
    out_row_or_col = out_nd - 2 if contracted == spec.ndim - 1 else out_nd - 1
    dmap: dict[int, object] = {}
    for d in range(spec.ndim):
        if d == contracted:
            dmap[d] = CONTRACTED
        elif d >= spec.ndim - 2:
            dmap[d] = out_row_or_col
        else:
            dmap[d] = out_nd - spec.ndim + d
    return dmap


@register("Matmul")
def matmul(call: OpCall) -> OpStrategy:
    """``a @ b`` for operands of 2 or more dimensions (batch dimensions broadcast); a 1-D
    operand is computed replicated."""
    a, b = call.specs[0], call.specs[1]
    if a.ndim < 2 or b.ndim < 2:
        rep = call.replicate()
        out_shape = np.matmul(np.empty(a.shape, np.int8), np.empty(b.shape, np.int8)).shape
        return OpStrategy({0: rep, 1: rep}, rep, tuple(out_shape))
    batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    shape = batch + (a.shape[-2], b.shape[-1])
    dims = {0: _matrix_dims(a, len(shape), a.ndim - 1), 1: _matrix_dims(b, len(shape), b.ndim - 2)}
    return _contraction(call, dims, shape)
