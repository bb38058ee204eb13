"""``torch.distributed._functional_collectives``: collectives that return a new tensor
instead of writing into their argument (``out = all_reduce(x, "sum", group)``).

PyTorch's versions return an ``AsyncCollectiveTensor`` that waits on first use; here each
call waits before it returns, so ``wait_tensor`` has nothing left to wait for. ``group`` is
a process group (None: the default group), a 1-D ``DeviceMesh`` or a ``(mesh, mesh_dim)``
pair; naming ranks by list is not supported. Each records itself for ``CommDebugMode`` under PyTorch's operator name
(``c10d_functional.all_reduce``, ...). ``all_to_all_single_autograd`` is differentiable: its backward sends each
gradient back the way its rows came.
"""

from __future__ import annotations

from typing import Any

from .. import _creation
from .._tensor import Tensor
from ..autograd.function import Function
from ..ops.shape import cat
from . import collectives
from .comm_record import counted_as
from .device_mesh import DeviceMesh
from .groups import get_world_size
from .reduce_ops import ReduceOp

__all__ = [
    "all_gather_tensor",
    "all_reduce",
    "all_to_all_single",
    "all_to_all_single_autograd",
    "broadcast",
    "reduce_scatter_tensor",
    "wait_tensor",
]


def _group(group: Any) -> Any:
    """The process group of ``group``: itself, a 1-D mesh's, or the ``(mesh, mesh_dim)`` pair's."""
    if isinstance(group, DeviceMesh):
        if group.ndim != 1:
            raise ValueError(
                f"a functional collective over a {group.ndim}-D DeviceMesh needs its dimension: pass (mesh, mesh_dim)"
            )
        return group.get_group(0)
    if isinstance(group, tuple) and len(group) == 2 and isinstance(group[0], DeviceMesh):
        return group[0].get_group(group[1])
    if group is not None and isinstance(group, (list, tuple, str)):
        raise NotImplementedError(
            f"functional collectives take a process group, a DeviceMesh or (mesh, mesh_dim) here (or None), "
            f"got {type(group).__name__}; make a group with dist.new_group(ranks)"
        )
    return group


def _op(reduce_op: str | ReduceOp) -> ReduceOp:
    if isinstance(reduce_op, ReduceOp):
        return reduce_op
    name = str(reduce_op).upper()
    if name not in ReduceOp.__members__:
        raise ValueError(f"unknown reduce op {reduce_op!r}; expected one of {sorted(ReduceOp.__members__)}")
    return ReduceOp[name]


def wait_tensor(tensor: Tensor) -> Tensor:
    """The tensor a functional collective returned (already complete here)."""
    return tensor


def all_reduce(self: Tensor, reduceOp: str, group: Any, tag: str = "") -> Tensor:
    """A new tensor: ``self`` reduced over the group with ``reduceOp`` (``"sum"``, ``"avg"``, ...)."""
    out = self.detach().clone()
    with counted_as("c10d_functional.all_reduce"):
        collectives.all_reduce(out, op=_op(reduceOp), group=_group(group))
    return out


def broadcast(self: Tensor, src: int, group: Any, tag: str = "") -> Tensor:
    """A new tensor: rank ``src``'s ``self`` on every rank."""
    out = self.detach().clone()
    with counted_as("c10d_functional.broadcast"):
        collectives.broadcast(out, src=src, group=_group(group))
    return out


def all_gather_tensor(self: Tensor, gather_dim: int, group: Any, tag: str = "") -> Tensor:
    """Every rank's ``self`` concatenated along ``gather_dim`` in rank order."""
    pieces = [_creation.empty_like(self) for _ in range(get_world_size(_group(group)))]
    with counted_as("c10d_functional.all_gather_into_tensor"):
        collectives.all_gather(pieces, self.detach().contiguous(), group=_group(group))
    return cat(pieces, gather_dim)


def reduce_scatter_tensor(self: Tensor, reduceOp: str, scatter_dim: int, group: Any, tag: str = "") -> Tensor:
    """``self`` reduced over the group, then split along ``scatter_dim``: rank ``i`` keeps piece ``i``."""
    size = get_world_size(_group(group))
    if self.shape[scatter_dim] % size:
        raise ValueError(
            f"dim {scatter_dim} of size {self.shape[scatter_dim]} is not divisible by the group size {size}"
        )
    pieces = [p.contiguous() for p in self.detach().chunk(size, scatter_dim)]
    out = _creation.empty_like(pieces[0])
    with counted_as("c10d_functional.reduce_scatter_tensor"):
        collectives.reduce_scatter(out, pieces, op=_op(reduceOp), group=_group(group))
    return out


def all_to_all_single(
    self: Tensor,
    output_split_sizes: list[int] | None,
    input_split_sizes: list[int] | None,
    group: Any,
    tag: str = "",
) -> Tensor:
    """Rows ``input_split_sizes[i]`` of ``self`` go to rank ``i``; the result holds the rows
    received, rank by rank (even splits of dim 0 when sizes are None)."""
    rows = sum(output_split_sizes) if output_split_sizes is not None else self.shape[0]
    out = _creation.empty((rows, *self.shape[1:]), dtype=self.dtype)
    with counted_as("c10d_functional.all_to_all_single"):
        collectives.all_to_all_single(
            out, self.detach().contiguous(), output_split_sizes, input_split_sizes, group=_group(group)
        )
    return out


class _AllToAllSingle(Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor, output_split_sizes: Any, input_split_sizes: Any, group: Any) -> Tensor:
        ctx.splits, ctx.group = (output_split_sizes, input_split_sizes), group
        return all_to_all_single(x, output_split_sizes, input_split_sizes, group)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        out_splits, in_splits = ctx.splits
        return all_to_all_single(grad, in_splits, out_splits, ctx.group), None, None, None


def all_to_all_single_autograd(
    self: Tensor,
    output_split_sizes: list[int] | None,
    input_split_sizes: list[int] | None,
    group: Any,
    tag: str = "",
) -> Tensor:
    """``all_to_all_single`` with a gradient (the reverse all-to-all)."""
    return _AllToAllSingle.apply(self, output_split_sizes, input_split_sizes, group)
