"""A process group's own collectives, as PyTorch's ``ProcessGroup`` methods that libraries
call (``pg.allreduce([t], opts)``, ``pg.broadcast(t, root)``, ``pg.barrier()``): each runs the
collective of ``torch.distributed`` of the same meaning on the group and returns its
``Work`` (these calls are always asynchronous, as PyTorch's). Ranks are the group's ranks.
The options classes (``AllreduceOptions``, ...) carry PyTorch's fields and defaults (a
timeout in them or in a call is not used: the group's own applies). A list of tensors holds
one tensor per call.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from .._tensor import Tensor
from .collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    barrier,
    broadcast,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
)
from .engine.process_group import ProcessGroup
from .engine.work import Work
from .p2p import irecv, isend
from .reduce_ops import ReduceOp

__all__ = [
    "AllgatherOptions",
    "AllreduceCoalescedOptions",
    "AllreduceOptions",
    "BarrierOptions",
    "BroadcastOptions",
    "ReduceOptions",
    "ReduceScatterOptions",
]

_UNSET_TIMEOUT = timedelta(milliseconds=-1)  # (PyTorch's: the group's own timeout)


class _Options:
    """Options of a collective, with PyTorch's field names and defaults."""

    def __init__(self) -> None:
        self.timeout = _UNSET_TIMEOUT
        self.asyncOp = True


class AllreduceOptions(_Options):
    """``reduceOp`` (``ReduceOp.SUM``), ``timeout``, ``asyncOp``."""

    def __init__(self) -> None:
        super().__init__()
        self.reduceOp = ReduceOp.SUM


class AllreduceCoalescedOptions(AllreduceOptions):
    """As :class:`AllreduceOptions`."""


class BroadcastOptions(_Options):
    """``rootRank`` (a group rank), ``rootTensor``, ``timeout``, ``asyncOp``."""

    def __init__(self) -> None:
        super().__init__()
        self.rootRank = 0
        self.rootTensor = 0


class ReduceOptions(BroadcastOptions):
    """``reduceOp``, ``rootRank``, ``rootTensor``, ``timeout``, ``asyncOp``."""

    def __init__(self) -> None:
        super().__init__()
        self.reduceOp = ReduceOp.SUM


class AllgatherOptions(_Options):
    """``timeout``, ``asyncOp``."""


class ReduceScatterOptions(AllreduceOptions):
    """``reduceOp``, ``timeout``, ``asyncOp``."""


class BarrierOptions(_Options):
    """``device_ids``, ``device``, ``timeout``, ``asyncOp``."""

    def __init__(self) -> None:
        super().__init__()
        self.device_ids: list[int] = []
        self.device = None


def _one(tensors: Any, what: str) -> Any:
    """The single tensor of ``tensors`` (a list, as PyTorch's methods take them)."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"ProcessGroup.{what}: expected a list of tensors, got {type(tensors).__name__}")
    if len(tensors) != 1:
        raise ValueError(f"ProcessGroup.{what}: expected a list of one tensor, got {len(tensors)}")
    return tensors[0]


def _options(opts: Any, cls: type, what: str) -> Any:
    if opts is None:
        return cls()
    if not isinstance(opts, cls):
        raise TypeError(f"ProcessGroup.{what}: expected {cls.__name__}, got {type(opts).__name__}")
    return opts


def _allreduce(
    self: ProcessGroup,
    tensors: Any,
    opts: AllreduceOptions | ReduceOp | None = None,
    *,
    op: ReduceOp | None = None,
    timeout: timedelta | None = None,
) -> Work:
    """``allreduce(tensors, opts=AllreduceOptions())``, ``allreduce(tensors, op=SUM)`` or
    ``allreduce(tensor, op=SUM)``."""
    if isinstance(opts, ReduceOp):  # (the second and third forms, positionally)
        opts, op = None, opts
    reduce_op = op if op is not None else _options(opts, AllreduceOptions, "allreduce").reduceOp
    tensor = tensors if isinstance(tensors, Tensor) else _one(tensors, "allreduce")
    return all_reduce(tensor, reduce_op, group=self, async_op=True)


def _broadcast(
    self: ProcessGroup,
    tensors: Any,
    opts: BroadcastOptions | int | None = None,
    timeout: timedelta | None = None,
) -> Work:
    """``broadcast(tensors, opts=BroadcastOptions())`` or ``broadcast(tensor, root)``."""
    if isinstance(opts, int):
        return broadcast(tensors, group=self, async_op=True, group_src=opts)
    root = _options(opts, BroadcastOptions, "broadcast").rootRank
    return broadcast(_one(tensors, "broadcast"), group=self, async_op=True, group_src=root)


def _reduce(
    self: ProcessGroup,
    tensors: Any,
    opts: ReduceOptions | int | None = None,
    op: ReduceOp = ReduceOp.SUM,
    timeout: timedelta | None = None,
) -> Work:
    """``reduce(tensors, opts=ReduceOptions())`` or ``reduce(tensor, root, op=SUM)``."""
    if isinstance(opts, int):
        return reduce(tensors, op=op, group=self, async_op=True, group_dst=opts)
    opts = _options(opts, ReduceOptions, "reduce")
    return reduce(
        _one(tensors, "reduce"), op=opts.reduceOp, group=self, async_op=True, group_dst=opts.rootRank
    )


def _allgather(
    self: ProcessGroup, output_tensors: list, input_tensors: Any, opts: AllgatherOptions | None = None
) -> Work:
    """``allgather([[out_0, ..., out_n-1]], [tensor], opts)`` or ``allgather([out_0, ...], tensor)``."""
    if not isinstance(input_tensors, (list, tuple)):
        return all_gather(output_tensors, input_tensors, group=self, async_op=True)
    _options(opts, AllgatherOptions, "allgather")
    return all_gather(
        _one(output_tensors, "allgather"), _one(input_tensors, "allgather"), group=self, async_op=True
    )


def _allgather_base(
    self: ProcessGroup, output: Any, input: Any, opts: AllgatherOptions | None = None
) -> Work:
    """Gather ``input`` from every rank into ``output``, laid end to end."""
    _options(opts, AllgatherOptions, "_allgather_base")
    return all_gather_into_tensor(output, input, group=self, async_op=True)


def _reduce_scatter(
    self: ProcessGroup,
    output_tensors: Any,
    input_tensors: list,
    opts: ReduceScatterOptions | ReduceOp | None = None,
    *,
    op: ReduceOp | None = None,
    timeout: timedelta | None = None,
) -> Work:
    """``reduce_scatter([out], [[in_0, ..., in_n-1]], opts)`` or ``reduce_scatter(out, [in_0, ...], op)``."""
    if isinstance(opts, ReduceOp):
        opts, op = None, opts
    reduce_op = op if op is not None else _options(opts, ReduceScatterOptions, "reduce_scatter").reduceOp
    if not isinstance(output_tensors, (list, tuple)):
        return reduce_scatter(output_tensors, input_tensors, reduce_op, group=self, async_op=True)
    output, inputs = _one(output_tensors, "reduce_scatter"), _one(input_tensors, "reduce_scatter")
    return reduce_scatter(output, inputs, reduce_op, group=self, async_op=True)


def _reduce_scatter_base(
    self: ProcessGroup, outputTensor: Any, inputTensor: Any, opts: ReduceScatterOptions | None = None
) -> Work:
    """Reduce ``inputTensor`` over the ranks; group rank ``i`` gets its ``i``-th block."""
    op = _options(opts, ReduceScatterOptions, "_reduce_scatter_base").reduceOp
    return reduce_scatter_tensor(outputTensor, inputTensor, op, group=self, async_op=True)


def _barrier(self: ProcessGroup, opts: BarrierOptions | timedelta | None = None) -> Work:
    """``barrier(opts=BarrierOptions())`` or ``barrier(timeout=None)``."""
    if not isinstance(opts, timedelta):
        _options(opts, BarrierOptions, "barrier")
    return barrier(group=self, async_op=True)


def _send(self: ProcessGroup, tensors: Any, dstRank: int, tag: int) -> Work:
    """Send the tensor to group rank ``dstRank``."""
    return isend(_one(tensors, "send"), group=self, tag=tag, group_dst=dstRank)


def _recv(self: ProcessGroup, tensors: Any, srcRank: int, tag: int) -> Work:
    """Receive into the tensor from group rank ``srcRank``."""
    return irecv(_one(tensors, "recv"), group=self, tag=tag, group_src=srcRank)


for _name, _method in {
    "allreduce": _allreduce,
    "broadcast": _broadcast,
    "reduce": _reduce,
    "allgather": _allgather,
    "_allgather_base": _allgather_base,
    "reduce_scatter": _reduce_scatter,
    "_reduce_scatter_base": _reduce_scatter_base,
    "barrier": _barrier,
    "send": _send,
    "recv": _recv,
}.items():
    _method.__name__ = _method.__qualname__ = _name
    setattr(ProcessGroup, _name, _method)
