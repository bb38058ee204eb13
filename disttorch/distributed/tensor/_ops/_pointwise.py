"""Pointwise ops: the output is laid out as the inputs, dimension by dimension after
broadcasting.

Along a mesh dimension where an input is ``Shard(d)``, every input that has the output
dimension ``d`` maps to (at full size, not broadcast) is cut the same way and the output
is ``Shard`` of that dimension; broadcast inputs stay replicated. ``Partial("sum")``
passes through the ops that are linear in it: ``a + b`` and ``a - b`` of two tensors (a
replicated one is made a summand, ``x / n`` per rank), ``-a``, copies and casts, and
``a * b`` or ``a / b`` with the partial tensor as the only partial factor (numerator);
any other op reduces its partial inputs first, as PyTorch does.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ...._public_name import defined_in
from .._op_schema import OpCall, OpStrategy
from ..placement_types import Partial, Placement, Replicate, Shard

__all__ = ["pointwise", "pointwise_rule_for"]

_ELEMENTWISE_MODULE = "disttorch.ops.elementwise"
#: pointwise Functions that live outside ``ops.elementwise``: ``nn.functional``'s activations, ``clone``
_POINTWISE_ELSEWHERE = frozenset({"LeakyRelu", "Elu", "Gelu", "Silu", "Softplus", "Clone"})
_LINEAR_UNARY = frozenset({"Neg", "Clone", "Cast"})
_LINEAR_BINARY = frozenset({"Add", "Sub"})


def pointwise_rule_for(cls: type) -> Callable[[OpCall], OpStrategy] | None:
    """The pointwise rule if ``cls`` is a pointwise op, else None."""
    if defined_in(cls, _ELEMENTWISE_MODULE) or cls.__name__ in _POINTWISE_ELSEWHERE:
        return pointwise
    return None


def _partial_passes(call: OpCall) -> bool:
    """Whether this op is linear in its ``Partial("sum")`` inputs (see the module header)."""
    name, specs = call.name, call.specs
    partial = [i for i, s in specs.items() if any(p.is_partial() for p in s.placements)]
    if any(not p.is_partial("sum") for i in partial for p in specs[i].placements if p.is_partial()):
        return False
    if name in _LINEAR_UNARY:
        return True
    if name in _LINEAR_BINARY:
        return set(specs) >= {0, 1}
    if name == "Mul":
        return len(partial) == 1
    if name == "Div":
        return partial == [0]
    return False


def pointwise(call: OpCall) -> OpStrategy:
    shape = tuple(np.broadcast_shapes(*(s.shape for s in call.specs.values())))
    inputs: dict[int, list[Placement]] = {i: [] for i in call.specs}
    output: list[Placement] = []
    partial_ok = _partial_passes(call)
    for m in range(call.mesh.ndim):
        sharded = [
            len(shape) - s.ndim + s.placements[m].dim
            for s in call.specs.values()
            if s.placements[m].is_shard()
            and s.shape[s.placements[m].dim] == shape[len(shape) - s.ndim + s.placements[m].dim]
        ]
        partial = any(s.placements[m].is_partial() for s in call.specs.values())
        if sharded:
            out_dim = sharded[0]
            for i, s in call.specs.items():
                d = out_dim - (len(shape) - s.ndim)
                full = d >= 0 and s.shape[d] == shape[out_dim]
                inputs[i].append(Shard(d) if full else Replicate())
            output.append(Shard(out_dim))
        elif partial and partial_ok:
            for i, s in call.specs.items():
                inputs[i].append(Partial() if call.name in _LINEAR_BINARY else s.placements[m])
            output.append(Partial())
        else:
            for i in call.specs:
                inputs[i].append(Replicate())
            output.append(Replicate())
    return OpStrategy({i: tuple(p) for i, p in inputs.items()}, tuple(output), shape)
