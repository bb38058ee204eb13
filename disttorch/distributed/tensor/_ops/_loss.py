"""Cross-entropy over logits sharded on the class dimension (``loss_parallel()``).

Inside ``loss_parallel()``, ``F.cross_entropy`` of a DTensor whose class dimension is
``Shard``-ed never gathers the logits. Each rank holds the logits of its classes:

- forward: the row maximum and the sum of ``exp(x - max)`` are all-reduced (max, then
  sum) into the log-normaliser; the target's logit is taken by the rank that holds the
  target's class (zero elsewhere) and all-reduced; the loss is ``log Z - x_target``,
  reduced as asked (``mean`` over the non-ignored targets, ``sum``, ``none``);
- backward: each rank's gradient is its own piece, ``softmax - one_hot`` (its classes
  only), with no communication.

Targets are class indices (replicated); ``weight`` and ``label_smoothing`` are not supported here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...._tensor import Tensor
from ....autograd.function import Function
from ... import collectives
from ...comm_record import counted_as
from ...reduce_ops import ReduceOp
from .._op_schema import OpCall, OpStrategy, register
from .._utils import compute_local_shape_and_global_offset
from ..placement_types import Replicate

__all__ = ["loss_parallel_state"]

#: ``[True]`` inside ``loss_parallel()``
loss_parallel_state = [False]


class ParallelCrossEntropy(Function):
    """Cross-entropy of class-sharded logits ``x`` (``(N, C_local)`` or ``(C_local,)``)
    holding classes ``[start, start + C_local)``; the group is the class dimension's."""

    _raw = True

    @staticmethod
    def forward(
        ctx, x: Tensor, target: Tensor, start: int, group: Any, ignore_index: int, reduction: str
    ) -> Any:
        logits = x._data if x._data.ndim == 2 else x._data[None]
        t = np.asarray(target._data).reshape(-1)
        rows = np.arange(len(t))
        top = logits.max(axis=1) if logits.shape[1] else np.full(len(t), -np.inf, logits.dtype)
        with counted_as("c10d_functional.all_reduce"):  # PyTorch's are functional collectives
            collectives.all_reduce(top, op=ReduceOp.MAX, group=group)
        e = np.exp(logits - top[:, None])
        total = e.sum(axis=1)
        with counted_as("c10d_functional.all_reduce"):
            collectives.all_reduce(total, op=ReduceOp.SUM, group=group)
        valid = t != ignore_index
        here = valid & (t >= start) & (t < start + logits.shape[1])
        local_t = np.where(here, t - start, 0)
        picked = np.where(here, logits[rows, np.clip(local_t, 0, max(logits.shape[1] - 1, 0))], 0).astype(
            logits.dtype
        )
        with counted_as("c10d_functional.all_reduce"):
            collectives.all_reduce(picked, op=ReduceOp.SUM, group=group)
        losses = np.where(valid, top + np.log(total) - picked, 0).astype(logits.dtype)
        ctx.saved = (e / total[:, None], here, local_t, valid, reduction, x._data.shape)
        if reduction == "none":
            return losses if x._data.ndim == 2 else losses.reshape(())
        if reduction == "sum":
            return np.asarray(losses.sum(), logits.dtype)
        return np.asarray(losses.sum() / valid.sum(), logits.dtype)

    @staticmethod
    def backward(ctx, g: Tensor) -> tuple:
        probs, here, local_t, valid, reduction, shape = ctx.saved
        grad = probs.copy()
        grad[np.arange(len(here))[here], local_t[here]] -= 1
        gd = np.asarray(g._data)
        if reduction == "none":
            scale = gd.reshape(-1, 1)
        elif reduction == "sum":
            scale = gd
        else:
            scale = gd / valid.sum()
        grad = (grad * valid[:, None] * scale).astype(probs.dtype).reshape(shape)
        return Tensor._make(grad), None, None, None, None, None


@register("CrossEntropyFunction")
def cross_entropy(call: OpCall) -> OpStrategy:
    x = call.specs[0]
    _, target, weight, ignore_index, reduction, label_smoothing = call.args
    class_dim = 1 if x.ndim >= 2 else 0
    cut = [m for m, p in enumerate(x.placements) if p.is_shard(class_dim)]
    if not loss_parallel_state[0] or not cut:
        raise NotImplementedError(
            f"Operator {call.describe()}: cross-entropy of a DTensor needs logits sharded on the class "
            "dimension, inside torch.distributed.tensor.parallel.loss_parallel()"
        )
    if x.ndim > 2 or len(cut) > 1 or weight is not None or label_smoothing:
        raise NotImplementedError(
            f"loss_parallel: {call.describe()} is supported for (N, C) or (C,) logits sharded on C along one "
            "mesh dimension, without weight or label_smoothing"
        )
    mesh_dim = cut[0]
    layout = tuple(p if m == mesh_dim else Replicate() for m, p in enumerate(x.placements))
    _, offset = compute_local_shape_and_global_offset(x.shape, call.mesh, layout)
    group = call.mesh.get_group(mesh_dim)

    def compute(logits: Tensor, labels: Tensor, *rest: Any) -> Tensor:
        return ParallelCrossEntropy.apply(logits, labels, offset[class_dim], group, ignore_index, reduction)

    shape = (x.shape[0],) if reduction == "none" and x.ndim == 2 else ()
    return OpStrategy({0: layout, 1: call.replicate()}, call.replicate(), shape, compute)
