"""Reductions over dimensions (``sum``, ``mean``) and softmax along one.

``sum`` over a sharded dimension leaves every rank a summand: ``Partial("sum")``.
``mean`` over an evenly sharded dimension leaves ``Partial("avg")`` (the mean of equal-sized
blocks' means); unevenly sharded, the input is gathered first, which is exact. Shards of
the other dimensions stay (renumbered when the reduced dimensions go). Both are linear,
so a ``Partial("sum")`` input stays a summand. Softmax and layer norm need the dimensions
they normalise whole: a shard of them is gathered, shards of the others stay.
"""

from __future__ import annotations

import math

from .._op_schema import OpCall, OpStrategy, register
from ..placement_types import Partial, Placement, Replicate, Shard

__all__ = ["layer_norm", "reduction", "softmax"]


@register("Sum", "Mean")
def reduction(call: OpCall) -> OpStrategy:
    a, dims, keepdim = call.specs[0], call.args[1], call.args[2]
    reduced = set(range(a.ndim)) if dims is None else {d % a.ndim for d in dims}
    shape = tuple(1 if d in reduced else s for d, s in enumerate(a.shape) if keepdim or d not in reduced)
    inputs: list[Placement] = []
    output: list[Placement] = []
    for p in a.placements:
        if p.is_shard() and p.dim in reduced:
            cuts = math.prod(call.mesh.size(k) for k, q in enumerate(a.placements) if q.is_shard(p.dim))
            if call.name == "Sum":
                inputs.append(p)
                output.append(Partial())
            elif a.shape[p.dim] % cuts == 0:
                inputs.append(p)
                output.append(Partial("avg"))
            else:
                inputs.append(Replicate())
                output.append(Replicate())
        elif p.is_shard():
            inputs.append(p)
            output.append(Shard(p.dim if keepdim else p.dim - sum(d < p.dim for d in reduced)))
        elif p.is_partial("sum"):
            inputs.append(p)
            output.append(p)
        else:
            inputs.append(Replicate())
            output.append(Replicate())
    return OpStrategy({0: tuple(inputs)}, tuple(output), shape)


@register("Softmax", "LogSoftmax")
def softmax(call: OpCall) -> OpStrategy:
    a, dim = call.specs[0], call.args[1] % max(call.specs[0].ndim, 1)
    layout = tuple(Replicate() if p.is_partial() or p.is_shard(dim) else p for p in a.placements)
    return OpStrategy({0: layout}, layout, a.shape)


@register("LayerNormFn")
def layer_norm(call: OpCall) -> OpStrategy:
    """``F.layer_norm(x, shape, weight, bias)`` over ``x``'s last ``len(shape)`` dimensions."""
    x, normalized = call.specs[0], call.args[3]
    whole_from = x.ndim - normalized
    layout = tuple(
        Replicate() if p.is_partial() or (p.is_shard() and p.dim >= whole_from) else p for p in x.placements
    )
    inputs = {i: (layout if i == 0 else call.replicate()) for i in call.specs}
    return OpStrategy(inputs, layout, x.shape)
