"""Moving a DTensor's pieces from one layout to another, mesh dimension by mesh dimension.

Along one mesh dimension the moves are:

=====================  =====================================================
``Shard(d)`` -> ``Replicate()``   all-gather along ``d``
``Replicate()`` -> ``Shard(d)``   keep this rank's chunk (no communication)
``Partial`` -> ``Replicate()``    all-reduce with the partial's op
``Partial`` -> ``Shard(d)``       reduce-scatter along ``d``
``Replicate()`` -> ``Partial``    ``sum``: every rank keeps ``x / n``; ``avg``/``min``/``max``: ``x``
``Shard(d)`` -> ``Shard(e)``      all-gather along ``d``, then keep the chunk along ``e``
=====================  =====================================================

A layout over several mesh dimensions is reached in three passes: gather every shard that
changes, and every shard cut inside a tensor dimension whose outer cut changes (the
innermost cut first), then reduce the partials that change, then cut the new shards (the
outermost first), so nested shards of one tensor dimension come out in ``torch.chunk``
order whatever the uneven sizes. Cuts nest in mesh order, a ``_StridedShard`` inside the
plain ones (``placement_types.cut_order``).

:class:`Redistribute` is the differentiable move: its backward moves the gradient back
(the gradient of a ``Partial`` tensor is ``Replicate``, as in PyTorch: the backward of
``Partial -> Replicate`` is nothing, that of ``Shard -> Replicate`` a chunk, that of
``Replicate -> Shard`` an all-gather).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..._tensor import Tensor
from ...autograd.function import AccumulateGrad, Function, gradient_edge
from .. import collectives
from ..comm_record import counted_as
from ..device_mesh import DeviceMesh
from ..reduce_ops import ReduceOp
from ._layout import chunk_bounds, gather_dim, local_chunk, reduce_scatter_dim
from ._partial_grad import PartialGrad, with_partial
from .placement_types import Partial, Placement, Replicate, cut_order

__all__ = ["Redistribute", "SumGradients", "redistribute_local", "reduce_op_of"]


def reduce_op_of(partial: Partial) -> ReduceOp:
    """The collective's op for a ``Partial`` (``"sum"`` -> ``ReduceOp.SUM``, ...)."""
    name = {"product": "PRODUCT", "prod": "PRODUCT"}.get(partial.reduce_op, partial.reduce_op.upper())
    if name not in ReduceOp.__members__:
        raise ValueError(f"Partial({partial.reduce_op!r}): unknown reduce op")
    return ReduceOp[name]


def _size_at(
    global_shape: Sequence[int], mesh: DeviceMesh, placements: Sequence[Placement], mesh_dim: int
) -> int:
    """How long the tensor dimension that ``placements[mesh_dim]`` shards is before that
    mesh dimension cuts it (earlier mesh dimensions sharding it have cut it already)."""
    dim = placements[mesh_dim].dim
    size = global_shape[dim]
    coordinate = mesh.get_coordinate()
    order = cut_order(placements)
    for i in order[: order.index(mesh_dim)]:
        if placements[i].is_shard(dim):
            start, stop = chunk_bounds(size, mesh.size(i), coordinate[i])
            size = stop - start
    return size


def _partition(local: np.ndarray, partial: Partial, n: int) -> np.ndarray:
    """``Replicate -> Partial``: the summand each rank keeps so that reducing gives ``local``."""
    if partial.reduce_op == "sum":
        return local / np.asarray(n, local.dtype) if local.dtype.kind in "fc" else local // n
    if partial.reduce_op in ("avg", "min", "max"):
        return local
    raise ValueError(f"Replicate to Partial({partial.reduce_op}) conversion is not supported.")


def redistribute_local(
    local: np.ndarray,
    mesh: DeviceMesh,
    src: Sequence[Placement],
    dst: Sequence[Placement],
    global_shape: Sequence[int],
) -> np.ndarray:
    """This rank's piece under ``dst`` of the tensor whose piece under ``src`` is ``local``
    (every rank of the mesh calls it with the same layouts)."""
    current, dst = list(src), list(dst)
    if current == dst:
        return local
    coordinate = mesh.get_coordinate()
    # 1. gather the shards that change, and those cut inside a tensor dimension whose outer cut changes
    changed = [p != q for p, q in zip(current, dst)]
    order = cut_order(current)

    def outer_change(i: int, dim: int) -> bool:
        outer = order[: order.index(i)]
        return any(changed[k] and (current[k].is_shard(dim) or dst[k].is_shard(dim)) for k in outer)

    gather = [i for i, p in enumerate(current) if p.is_shard() and (changed[i] or outer_change(i, p.dim))]
    for i in sorted(gather, key=order.index, reverse=True):
        size = _size_at(global_shape, mesh, current, i)
        local = gather_dim(local, current[i].dim, size, mesh.get_group(i), mesh.size(i))
        current[i] = Replicate()
    # 2. reduce the partials that change
    for i, p in enumerate(current):
        if not p.is_partial() or p == dst[i]:
            continue
        if dst[i].is_partial():
            raise ValueError(f"redistribute from {p} to {dst[i]} is not supported")
        op, target = reduce_op_of(p), dst[i]
        others = [q for j in range(len(dst)) if j != i for q in (current[j], dst[j])]
        alone = target.is_shard() and not any(q.is_shard(target.dim) for q in others)
        if alone:  # no other mesh dimension cuts that tensor dimension: one reduce-scatter
            local = reduce_scatter_dim(local, target.dim, op, mesh.get_group(i), mesh.size(i), coordinate[i])
            current[i] = target
        else:
            local = np.array(local, copy=True)
            with counted_as("c10d_functional.all_reduce"):
                collectives.all_reduce(local, op=op, group=mesh.get_group(i))
            current[i] = Replicate()
    # 3. cut the new shards and partition the new partials, outermost first
    for i in cut_order(dst):
        p = dst[i]
        if current[i] == p:
            continue
        if p.is_shard():
            local = local_chunk(local, p.dim, mesh.size(i), coordinate[i])
        elif p.is_partial():
            local = _partition(local, p, mesh.size(i))
        current[i] = p
    return local


def _backward_layouts(
    src: Sequence[Placement], dst: Sequence[Placement]
) -> tuple[tuple[Placement, ...], tuple[Placement, ...]]:
    """The move a gradient makes back: from ``dst`` to ``src``, a ``Partial`` on either
    side read as ``Replicate`` (gradients of partial tensors are replicated)."""

    def plain(p: Placement) -> Placement:
        return Replicate() if p.is_partial() else p

    return tuple(plain(p) for p in dst), tuple(plain(p) for p in src)


class Redistribute(Function):
    """``x`` (this rank's piece under ``src``) as its piece under ``dst``; differentiable.

    A gradient that reaches it as a summand (:class:`PartialGrad`) is reduced on the way
    back (``Partial -> Shard``: a reduce-scatter), or, when nothing moved and ``x`` is a
    ``DTensor`` whose own node can take a summand (another redistribution, or a parameter),
    passed on as it is."""

    _raw = True

    @staticmethod
    def forward(ctx, x: Tensor, mesh: DeviceMesh, src: Any, dst: Any, global_shape: Any) -> np.ndarray:
        ctx.move = (mesh, src, dst, global_shape)
        ctx.passes_summands = tuple(src) == tuple(dst) and _takes_summands(x)
        out = redistribute_local(x._data, mesh, src, dst, global_shape)
        return out if out is not x._data else out.view()

    @staticmethod
    def backward(ctx, g: Tensor) -> tuple:
        mesh, src, dst, global_shape = ctx.move
        if isinstance(g, PartialGrad) and ctx.passes_summands:
            return g, None, None, None, None
        back_src, back_dst = _backward_layouts(src, dst)
        grad = redistribute_local(
            np.asarray(g._data), mesh, with_partial(back_src, g), back_dst, global_shape
        )
        return Tensor._make(grad), None, None, None, None


def _takes_summands(x: Tensor) -> bool:
    """Whether the node that gets the gradient of ``x`` takes a :class:`PartialGrad`: a
    redistribution or a ``DTensor`` leaf's, also behind the identity nodes of module
    backward hooks (``_layout_preserving``: output ``i`` is input ``i + 1``)."""
    if not x._rg:
        return False
    node, nr = gradient_edge(x)
    while getattr(node, "_layout_preserving", False):
        edge = node.next_edges[nr + 1]
        if edge is None:
            return False
        node, nr = edge
    if isinstance(node, AccumulateGrad):
        return hasattr(node.variable, "_placements")
    return isinstance(node, Redistribute)


class SumGradients(Function):
    """The identity, whose backward sums the gradient over ``mesh_dims``.

    A replicated input of an op whose ranks compute different pieces (``x`` in ``x @ W``
    with ``W`` cut by columns, a norm's weight on sequence shards) gets on every rank the
    gradient of that rank's piece only: a partial sum. With ``defer`` (the input is a
    redistribution's output) it goes on as a :class:`PartialGrad`, reduced where PyTorch
    reduces it; otherwise it is all-reduced at once.
    """

    _raw = True

    @staticmethod
    def forward(ctx, x: Tensor, mesh: DeviceMesh, mesh_dims: tuple[int, ...], defer: bool) -> np.ndarray:
        ctx.where = (mesh, mesh_dims, defer)
        return x._data.view()

    @staticmethod
    def backward(ctx, g: Tensor) -> tuple:
        mesh, mesh_dims, defer = ctx.where
        summand = PartialGrad.of(g, mesh, mesh_dims)
        return (summand if defer else summand.reduced()), None, None, None
