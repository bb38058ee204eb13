"""``torch.distributed.nn.functional``: collectives that autograd differentiates.

Each function leaves its argument alone, returns new tensors, and records a node whose
backward runs the collective's adjoint, so a loss computed from gathered features (a
contrastive loss over the whole global batch, Lightning's ``all_gather(sync_grads=True)``)
sends every rank the gradient of its own piece:

=====================  ===========================================================
forward                backward (on the gradient)
=====================  ===========================================================
``broadcast`` (src)    ``reduce`` (sum) to src; zero on the other ranks
``reduce`` (dst)       ``broadcast`` from dst
``all_reduce`` (op)    ``all_reduce`` with the same op (the sum's adjoint is itself)
``all_gather``         each rank's slice summed over the ranks, in rank order
                       (an ``all_to_all`` then a sum: a reduce-scatter)
``reduce_scatter``     ``all_gather``
``gather`` (dst)       ``scatter`` from dst
``scatter`` (src)      ``gather`` to src
``all_to_all``         ``all_to_all`` back
``all_to_all_single``  ``all_to_all_single`` with the split sizes swapped
=====================  ===========================================================

As in PyTorch, ``all_reduce``'s backward applies the forward's op (right for SUM only), and
``_all_gather_base`` has no backward on a CPU backend. ``broadcast``, ``all_gather`` and
``reduce_scatter`` warn that PyTorch deprecates them for the functional collectives.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

from ..._creation import empty_like, zeros_like
from ..._tensor import Tensor
from ...autograd.function import Function
from .. import collectives as c
from ..groups import get_rank, get_world_size
from ..reduce_ops import ReduceOp

__all__ = [
    "all_gather",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "broadcast",
    "gather",
    "reduce",
    "reduce_scatter",
    "scatter",
]


def _deprecated(name: str, instead: str) -> None:
    warnings.warn(
        f"torch.distributed.nn.functional.{name} is deprecated, use "
        f"torch.distributed._functional_collectives.{instead} instead.",
        FutureWarning,
        stacklevel=3,
    )


# ---------------------------------------------------------------------- the nodes
class _Broadcast(Function):
    @staticmethod
    def forward(ctx, src: int, group: Any, tensor: Tensor) -> Tensor:
        ctx.src, ctx.group, ctx.rank = src, group, get_rank(group)
        out = tensor.clone()
        c.broadcast(out, src, group=group)
        return out

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple:
        gx = _Reduce.apply(ctx.src, ReduceOp.SUM, ctx.group, grad)
        if ctx.src != ctx.rank:
            gx = zeros_like(gx)
        return None, None, gx


class _Reduce(Function):
    @staticmethod
    def forward(ctx, dst: int, op: ReduceOp, group: Any, tensor: Tensor) -> Tensor:
        ctx.dst, ctx.group = dst, group
        out = tensor.clone()
        c.reduce(out, dst, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple:
        return None, None, None, _Broadcast.apply(ctx.dst, ctx.group, grad)


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op: ReduceOp, group: Any, tensor: Tensor) -> Tensor:
        ctx.op, ctx.group = op, group
        out = tensor.contiguous().clone()
        c.all_reduce(out, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple:
        return None, None, _AllReduce.apply(ctx.op, ctx.group, grad)


class _AllGather(Function):
    @staticmethod
    def forward(ctx, group: Any, tensor: Tensor) -> tuple:
        ctx.group = group
        tensor = tensor.contiguous()
        outs = [empty_like(tensor) for _ in range(get_world_size(group))]
        c.all_gather(outs, tensor, group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads: Tensor) -> tuple:
        pieces = _AllToAll.apply(ctx.group, [empty_like(g) for g in grads], *grads)
        total = pieces[0]
        for p in pieces[1:]:
            total = total + p
        return None, total


class _ReduceScatter(Function):
    @staticmethod
    def forward(ctx, op: ReduceOp, group: Any, output: Tensor, *inputs: Tensor) -> Tensor:
        ctx.group = group
        out = output.contiguous()
        c.reduce_scatter(out, [t.contiguous() for t in inputs], op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple:
        return (None, None, None, *_AllGather.apply(ctx.group, grad))


class _Gather(Function):
    @staticmethod
    def forward(ctx, dst: int, group: Any, tensor: Tensor) -> tuple:
        ctx.dst, ctx.group = dst, group
        outs = [zeros_like(tensor) for _ in range(get_world_size(group))]
        c.gather(tensor.contiguous(), outs if get_rank() == dst else None, dst, group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads: Tensor) -> tuple:
        return None, None, _Scatter.apply(ctx.dst, ctx.group, *grads)


class _Scatter(Function):
    @staticmethod
    def forward(ctx, src: int, group: Any, *tensors: Tensor) -> Tensor:
        ctx.src, ctx.group = src, group
        if any(t.shape != tensors[0].shape for t in tensors):
            raise AssertionError("scatter needs tensors of one size")
        out = zeros_like(tensors[0])
        c.scatter(out, list(tensors) if get_rank() == src else None, src, group=group)
        return out

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple:
        return (None, None, *_Gather.apply(ctx.src, ctx.group, grad))


class _AllToAll(Function):
    @staticmethod
    def forward(ctx, group: Any, outputs: list, *tensors: Tensor) -> tuple:
        ctx.group, ctx.sizes = group, [t.shape for t in tensors]
        c.all_to_all(outputs, [t.contiguous() for t in tensors], group=group)
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *grads: Tensor) -> tuple:
        back = [grads[0].new_empty(size) for size in ctx.sizes]
        return (None, None, *_AllToAll.apply(ctx.group, back, *grads))


class _AllToAllSingle(Function):
    @staticmethod
    def forward(ctx, group: Any, output: Tensor, out_splits: Any, in_splits: Any, tensor: Tensor) -> Tensor:
        ctx.group, ctx.shape, ctx.splits = group, tensor.shape, (out_splits, in_splits)
        c.all_to_all_single(output, tensor, out_splits, in_splits, group=group)
        return output

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple:
        out_splits, in_splits = ctx.splits
        back = grad.new_empty(ctx.shape)
        return (
            None,
            None,
            None,
            None,
            _AllToAllSingle.apply(ctx.group, back, in_splits, out_splits, grad.contiguous()),
        )


class _AllGatherBase(Function):
    @staticmethod
    def forward(ctx, output: Tensor, tensor: Tensor, group: Any) -> Tensor:
        ctx.group = group
        c.all_gather_into_tensor(output, tensor.contiguous(), group=group)
        return output

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple:
        raise RuntimeError("Backend not supported!")  # PyTorch's answer on CPU backends


# ---------------------------------------------------------------------- the functions
def broadcast(tensor: Tensor, src: int, group: Any = None) -> Tensor:
    """``tensor`` of rank ``src`` on every rank; the gradient sums back to ``src``."""
    _deprecated("broadcast", "broadcast")
    return _Broadcast.apply(src, group, tensor)


def reduce(tensor: Tensor, dst: int, op: ReduceOp = ReduceOp.SUM, group: Any = None) -> Tensor:
    """``tensor`` reduced over the ranks (the result is meaningful on ``dst`` only)."""
    return _Reduce.apply(dst, op, group, tensor)


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: Any = None) -> Tensor:
    """``tensor`` reduced over the ranks, on every rank."""
    return _AllReduce.apply(op, group, tensor)


def all_gather(tensor: Tensor, group: Any = None) -> tuple:
    """Every rank's ``tensor``, in rank order; each rank's gradient is the sum over ranks of
    the gradient of its own entry."""
    _deprecated("all_gather", "all_gather_single")
    return _AllGather.apply(group, tensor)


def _all_gather_base(output_tensor: Tensor, input_tensor: Tensor, group: Any = None) -> Tensor:
    """Every rank's ``input_tensor`` concatenated into ``output_tensor`` (no backward here)."""
    return _AllGatherBase.apply(output_tensor, input_tensor, group)


def reduce_scatter(
    output: Tensor, input_list: Sequence[Tensor], op: ReduceOp = ReduceOp.SUM, group: Any = None
) -> Tensor:
    """Entry ``rank`` of ``input_list`` reduced over the ranks, written to ``output``."""
    _deprecated("reduce_scatter", "reduce_scatter_single")
    return _ReduceScatter.apply(op, group, output, *input_list)


def gather(tensor: Tensor, dst: int = 0, group: Any = None) -> tuple:
    """Every rank's ``tensor`` on ``dst`` (zeros elsewhere)."""
    return _Gather.apply(dst, group, tensor)


def scatter(tensors: Sequence[Tensor], src: int = 0, group: Any = None) -> Tensor:
    """Entry ``rank`` of ``src``'s ``tensors`` (every rank passes tensors of that size)."""
    return _Scatter.apply(src, group, *tensors)


def all_to_all(output_tensor_list: list, input_tensor_list: Sequence[Tensor], group: Any = None) -> tuple:
    """Entry ``i`` of ``input_tensor_list`` sent to rank ``i``; rank ``i``'s entry for this
    rank received into ``output_tensor_list[i]``."""
    return _AllToAll.apply(group, output_tensor_list, *input_tensor_list)


def all_to_all_single(
    output: Tensor,
    input: Tensor,
    output_split_sizes: list | None = None,
    input_split_sizes: list | None = None,
    group: Any = None,
) -> Tensor:
    """``input`` split along dim 0 and exchanged, the received pieces concatenated in ``output``."""
    return _AllToAllSingle.apply(group, output, output_split_sizes, input_split_sizes, input)
