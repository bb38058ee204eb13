"""Ops on DTensors: sharding propagation, one rule per op (``_ops/``).

Every op of disttorch is a ``Function``; ``Function.apply`` hands a call that has an
argument of type ``DTensor`` to :func:`dispatch` (registered when the first DTensor is
made; FSDP's sharded parameters are DTensors too).
It looks up the op's rule by the op's name, asks it which layout each tensor argument
needs and which layout the output gets, redistributes the arguments (differentiably, as
plain tensors holding the pieces), runs the op on the pieces, and wraps the result as a
DTensor that shares the op's autograd node. Gradients flow through plain tensors, so
backward never meets a DTensor; a DTensor leaf's ``.grad`` is its piece's gradient,
laid out as the leaf (``DTensor.grad``). A replicated input of an op whose output differs
between ranks (sharded or partial) gets the sum of every rank's gradient (``SumGradients``):
reduced at once, or handed on as a summand where PyTorch keeps it ``Partial``
(``_partial_grad.py``).

An identity Function marked ``_layout_preserving`` (module backward hooks wrap a module's
inputs and outputs in one) runs on the pieces, each output laid out as its argument.

An op without a rule raises ``NotImplementedError`` naming the op and the layouts, as
PyTorch does. A plain tensor next to DTensors must be 0-d (a scalar), unless inside
``implicit_replication()``, where it counts as replicated.
"""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ...autograd.function import dispatch_disabled
from ._op_schema import RULES, OpCall, TensorSpec
from ._ops import pointwise_rule_for
from ._redistribute import Redistribute, SumGradients
from .placement_types import Replicate, _StridedShard

__all__ = ["dispatch", "implicit_replication_state"]

#: ``[True]`` inside ``implicit_replication()``
implicit_replication_state = [False]


def _call(DTensor: type, cls: type, args: tuple) -> OpCall:
    """The rule's view of the call: every tensor argument's layout and shapes."""
    name = cls.__name__
    mesh = next(a._mesh for a in args if isinstance(a, DTensor))
    specs = {}
    for i, a in enumerate(args):
        if isinstance(a, DTensor):
            if a._mesh != mesh:
                raise NotImplementedError(
                    f"{name}: DTensor does not support cross-mesh operations ({mesh}, {a._mesh})"
                )
            if any(isinstance(p, _StridedShard) for p in a._placements):
                raise NotImplementedError(
                    f"{name}: arg{i} is laid out as {a._placements}; ops by sharding propagation do not take "
                    "_StridedShard, redistribute it first"
                )
            specs[i] = TensorSpec(a._placements, a._global_shape, a._data.shape)
        elif isinstance(a, Tensor):
            if a._data.ndim and not implicit_replication_state[0]:
                raise RuntimeError(
                    f"{name}: got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to DTensor "
                    "before calling distributed operators!"
                )
            specs[i] = TensorSpec((Replicate(),) * mesh.ndim, a._data.shape, a._data.shape)
    return OpCall(cls, args, mesh, specs)


def _preserve_layouts(DTensor: type, cls: type, args: tuple) -> tuple:
    """Run an identity Function (``_layout_preserving``: output ``i`` is its ``i``-th tensor
    argument, as the module backward hooks' capture Functions) on the pieces; each output is
    laid out as its argument."""
    with dispatch_disabled():
        out = cls.apply(*args)
    tensors = [a for a in args if isinstance(a, Tensor)]
    return tuple(
        DTensor._share(o, a._mesh, a._placements, a._global_shape) if isinstance(a, DTensor) else o
        for o, a in zip(out, tensors)
    )


def dispatch(DTensor: type, cls: type, args: tuple) -> Any:
    """Run op ``cls`` on ``args`` (some of them of type ``DTensor``, the class this handler
    is registered for) by its sharding rule."""
    if getattr(cls, "_layout_preserving", False):
        return _preserve_layouts(DTensor, cls, args)
    call = _call(DTensor, cls, args)
    rule = RULES.get(call.name) or pointwise_rule_for(cls)
    if rule is None:
        raise NotImplementedError(f"Operator {call.describe()} does not have a sharding strategy registered.")
    strategy = rule(call)
    local = list(args)
    with dispatch_disabled():
        for i, spec in call.specs.items():
            want = strategy.inputs.get(i, spec.placements)
            if isinstance(args[i], DTensor) or want != spec.placements:
                local[i] = Redistribute.apply(args[i], call.mesh, spec.placements, want, spec.shape)
            summed = tuple(
                m for m, p in enumerate(want) if p.is_replicate() and not strategy.output[m].is_replicate()
            )
            if summed and local[i].requires_grad:
                local[i] = SumGradients.apply(
                    local[i], call.mesh, summed, isinstance(local[i].grad_fn, Redistribute)
                )
        out = (strategy.compute or cls.apply)(*local)
    if isinstance(out, tuple):
        shapes = strategy.shape if isinstance(strategy.shape, list) else [strategy.shape] * len(out)
        return tuple(DTensor._share(o, call.mesh, strategy.output, s) for o, s in zip(out, shapes))
    return DTensor._share(out, call.mesh, strategy.output, strategy.shape)
