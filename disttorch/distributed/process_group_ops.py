"""A process group's own collectives, as PyTorch's ``ProcessGroup`` methods that libraries
call (``pg.allreduce([t], opts)``, ``pg.broadcast(t, root)``, ``pg.barrier()``): each runs the
collective of ``torch.distributed`` of the same meaning on the group and returns its
``Work`` (these calls are always asynchronous, as PyTorch's). Ranks are the group's ranks.
The options classes (``AllreduceOptions``, ...) carry PyTorch's fields and defaults; a
timeout in them or in a call bounds that call (unset: the group's own timeout).
Lists of several tensors are taken where gloo takes them, with its meaning: ``allreduce``
and ``broadcast`` treat the list's tensors (one shape and dtype) as more ranks' worth of the
same tensor and leave the result in every one; ``allgather`` fills every output list with
each rank's inputs in turn; ``reduce``, ``gather``, ``scatter``, ``reduce_scatter``,
``send`` and ``recv`` take one tensor, as gloo's, and refuse more with a ``RuntimeError``.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any, Callable

from .._tensor import Tensor
from .coalesced import gather_coalesced, reduce_coalesced
from .collectives import (
    _reduce_op,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
)
from .engine.process_group import ProcessGroup, call_timeout
from .engine.work import Work
from .p2p import irecv, isend
from .reduce_ops import ReduceOp
from .tensor_io import Flat, array_of

__all__ = [
    "AllToAllOptions",
    "AllgatherOptions",
    "AllreduceCoalescedOptions",
    "AllreduceOptions",
    "BarrierOptions",
    "BroadcastOptions",
    "GatherOptions",
    "ReduceOptions",
    "ReduceScatterOptions",
    "ScatterOptions",
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


class GatherOptions(_Options):
    """``rootRank`` (a group rank), ``timeout``, ``asyncOp``."""

    def __init__(self) -> None:
        super().__init__()
        self.rootRank = 0


class ScatterOptions(GatherOptions):
    """As :class:`GatherOptions`."""


class AllToAllOptions(_Options):
    """``timeout``, ``asyncOp``."""


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


def _seconds(timeout: timedelta | None) -> float | None:
    """A call's timeout in seconds; ``None`` where unset (the group's own applies)."""
    if timeout is None:
        return None
    if not isinstance(timeout, timedelta):
        raise TypeError(f"ProcessGroup: a timeout must be a datetime.timedelta, got {timeout!r}")
    return timeout.total_seconds() if timeout > timedelta(0) else None


def _options(opts: Any, cls: type, what: str) -> Any:
    if opts is None:
        return cls()
    if not isinstance(opts, cls):
        raise TypeError(f"ProcessGroup.{what}: expected {cls.__name__}, got {type(opts).__name__}")
    return opts


def _tensors(tensors: Any, what: str) -> list:
    """``tensors`` (a list or tuple, as PyTorch's methods take them) as a non-empty list."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"ProcessGroup.{what}: expected a list of tensors, got {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"ProcessGroup.{what}: the list of tensors is empty")
    return list(tensors)


def _one(tensors: Any, what: str, role: str = "tensor") -> Any:
    """The single tensor of ``tensors``: gloo takes one here."""
    tensors = _tensors(tensors, what)
    if len(tensors) != 1:
        raise RuntimeError(
            f"ProcessGroup.{what}: requires a single-element {role} list (as gloo), got {len(tensors)}"
        )
    return tensors[0]


def _alike(tensors: list, what: str) -> None:
    """Check that the tensors of a list have one shape and dtype (gloo's rule)."""
    first = array_of(tensors[0], f"{what} tensor 0")
    for i, t in enumerate(tensors[1:], 1):
        a = array_of(t, f"{what} tensor {i}")
        if a.shape != first.shape or a.dtype != first.dtype:
            raise RuntimeError(
                f"ProcessGroup.{what}: the tensors of the list must have one shape and dtype: "
                f"tensor {i} is {a.dtype}{list(a.shape)}, tensor 0 {first.dtype}{list(first.shape)}"
            )


def _after(works: list[Work], result: Any, finish: Callable[[], None] | None = None) -> Work:
    """One ``Work`` for ``works``: done once all are, and then ``finish()`` has run (in the
    thread that completed the last); it fails with the first error among them."""
    done = Work(" + ".join(w.description for w in works), result)
    left, lock = [len(works)], threading.Lock()

    def one(_future: Any) -> None:
        with lock:
            left[0] -= 1
            if left[0]:
                return
        try:
            for w in works:
                w.wait()
            if finish is not None:
                finish()
        except BaseException as error:  # noqa: BLE001 - handed to the caller's Work
            done._fail(error)
            return
        done._complete()

    for w in works:
        w.get_future().add_done_callback(one)
    return done


def _copy_into(source: Any, targets: list) -> Callable[[], None]:
    """A step that copies ``source``'s values into each tensor of ``targets``."""

    def copy() -> None:
        values = Flat(source, write=False).flat
        for t in targets:
            out = Flat(t, read=False)
            out.flat[...] = values
            out.write_back()

    return copy


def _allreduce(
    self: ProcessGroup,
    tensors: Any,
    opts: AllreduceOptions | ReduceOp | None = None,
    *,
    op: ReduceOp | None = None,
    timeout: timedelta | None = None,
) -> Work:
    """``allreduce(tensors, opts=AllreduceOptions())``, ``allreduce(tensors, op=SUM, timeout=None)``
    or ``allreduce(tensor, op=SUM, timeout=None)``. The tensors of a list (one shape and dtype)
    are reduced together with every rank's, and each gets the result."""
    if isinstance(opts, ReduceOp):  # (the second and third forms, positionally)
        opts, op = None, opts
    opts = _options(opts, AllreduceOptions, "allreduce")
    reduce_op = op if op is not None else opts.reduceOp
    tensors = [tensors] if isinstance(tensors, Tensor) else _tensors(tensors, "allreduce")
    with call_timeout(_seconds(timeout or opts.timeout)):
        if len(tensors) == 1:
            return all_reduce(tensors[0], reduce_op, group=self, async_op=True)
        _alike(tensors, "allreduce")
        first = Flat(tensors[0])
        _, ufunc = _reduce_op(reduce_op, first.flat.dtype, "allreduce")
        for t in tensors[1:]:
            ufunc(first.flat, Flat(t, write=False).flat, out=first.flat)
        first.write_back()
        work = all_reduce(tensors[0], reduce_op, group=self, async_op=True)
    return _after([work], tensors, _copy_into(tensors[0], tensors[1:]))


def _allreduce_coalesced(
    self: ProcessGroup, tensors: Any, opts: AllreduceCoalescedOptions | None = None
) -> Work:
    """Reduce each tensor of ``tensors`` (one dtype, any shapes) over the ranks, as one
    collective of them laid end to end."""
    opts = _options(opts, AllreduceCoalescedOptions, "allreduce_coalesced")
    with call_timeout(_seconds(opts.timeout)):
        return reduce_coalesced(_tensors(tensors, "allreduce_coalesced"), opts.reduceOp, self, True)


def _broadcast(
    self: ProcessGroup,
    tensors: Any,
    opts: BroadcastOptions | int | None = None,
    timeout: timedelta | None = None,
) -> Work:
    """``broadcast(tensors, opts=BroadcastOptions())`` or ``broadcast(tensor, root, timeout=None)``.
    The root's ``tensors[rootTensor]`` goes into every tensor of the list on every rank."""
    if isinstance(opts, int):
        with call_timeout(_seconds(timeout)):
            return broadcast(tensors, group=self, async_op=True, group_src=opts)
    opts = _options(opts, BroadcastOptions, "broadcast")
    tensors = _tensors(tensors, "broadcast")
    if not 0 <= opts.rootTensor < len(tensors):
        raise RuntimeError(
            f"ProcessGroup.broadcast: rootTensor {opts.rootTensor} is out of the list of {len(tensors)}"
        )
    _alike(tensors, "broadcast")
    source = tensors[opts.rootTensor]
    with call_timeout(_seconds(opts.timeout)):
        work = broadcast(source, group=self, async_op=True, group_src=opts.rootRank)
    if len(tensors) == 1:
        return work
    return _after([work], tensors, _copy_into(source, [t for t in tensors if t is not source]))


def _reduce(
    self: ProcessGroup,
    tensors: Any,
    opts: ReduceOptions | int | None = None,
    op: ReduceOp = ReduceOp.SUM,
    timeout: timedelta | None = None,
) -> Work:
    """``reduce(tensors, opts=ReduceOptions())`` or ``reduce(tensor, root, op=SUM, timeout=None)``."""
    if isinstance(opts, int):
        with call_timeout(_seconds(timeout)):
            return reduce(tensors, op=op, group=self, async_op=True, group_dst=opts)
    opts = _options(opts, ReduceOptions, "reduce")
    tensor = _one(tensors, "reduce")
    with call_timeout(_seconds(opts.timeout)):
        return reduce(tensor, op=opts.reduceOp, group=self, async_op=True, group_dst=opts.rootRank)


def _allgather(
    self: ProcessGroup,
    output_tensors: list,
    input_tensors: Any,
    opts: AllgatherOptions | timedelta | None = None,
) -> Work:
    """``allgather(output_lists, input_list, opts)`` or ``allgather(outputs, tensor, timeout=None)``.
    With ``k`` inputs every output list holds ``world_size * k`` tensors: each rank's
    inputs in turn (every list the same)."""
    if not isinstance(input_tensors, (list, tuple)):
        with call_timeout(_seconds(opts)):
            return all_gather(output_tensors, input_tensors, group=self, async_op=True)
    opts = _options(opts, AllgatherOptions, "allgather")
    inputs, outputs = _tensors(input_tensors, "allgather"), _tensors(output_tensors, "allgather")
    k, world = len(inputs), self.size()
    if len(outputs) != k:
        raise RuntimeError(
            f"ProcessGroup.allgather: requires input/output tensor lists to have the same length "
            f"(as gloo), got {k} inputs and {len(outputs)} output lists"
        )
    for i, row in enumerate(outputs):
        if not isinstance(row, (list, tuple)) or len(row) != world * k:
            got = len(row) if isinstance(row, (list, tuple)) else type(row).__name__
            raise RuntimeError(
                f"ProcessGroup.allgather: output list {i} must hold world_size * inputs = "
                f"{world * k} tensors, got {got}"
            )
    with call_timeout(_seconds(opts.timeout)):
        if k == 1:
            return all_gather(list(outputs[0]), inputs[0], group=self, async_op=True)
        _alike(inputs, "allgather")
        rows = [list(outputs[0][r * k : (r + 1) * k]) for r in range(world)]
        work = gather_coalesced(rows, inputs, self, True)

    def copy_rows() -> None:
        for i, source in enumerate(outputs[0]):
            _copy_into(source, [row[i] for row in outputs[1:]])()

    return _after([work], outputs, copy_rows)


def _allgather_base(
    self: ProcessGroup, output: Any, input: Any, opts: AllgatherOptions | None = None
) -> Work:
    """Gather ``input`` from every rank into ``output``, laid end to end."""
    opts = _options(opts, AllgatherOptions, "_allgather_base")
    with call_timeout(_seconds(opts.timeout)):
        return all_gather_into_tensor(output, input, group=self, async_op=True)


def _allgather_into_tensor_coalesced(
    self: ProcessGroup, outputs: Any, inputs: Any, opts: AllgatherOptions | None = None
) -> Work:
    """``outputs[i]`` gets every rank's ``inputs[i]``, laid end to end."""
    opts = _options(opts, AllgatherOptions, "allgather_into_tensor_coalesced")
    outputs, inputs = _pairs(outputs, inputs, "allgather_into_tensor_coalesced")
    with call_timeout(_seconds(opts.timeout)):
        works = [all_gather_into_tensor(o, i, group=self, async_op=True) for o, i in zip(outputs, inputs)]
    return _after(works, outputs)


def _pairs(outputs: Any, inputs: Any, what: str) -> tuple[list, list]:
    outputs, inputs = _tensors(outputs, what), _tensors(inputs, what)
    if len(outputs) != len(inputs):
        raise RuntimeError(
            f"ProcessGroup.{what}: requires as many outputs as inputs, got {len(outputs)} and {len(inputs)}"
        )
    return outputs, inputs


def _root_side(self: ProcessGroup, tensors: Any, root: int, what: str, role: str) -> list | None:
    """The root's list of ``world_size`` tensors; ``None`` on the other ranks, whose list must
    be empty (gloo's rule)."""
    if self.rank() != root:
        if tensors:
            raise RuntimeError(f"ProcessGroup.{what}: requires an empty {role} list on non-root ranks")
        return None
    return list(_tensors(tensors, what))


def _gather(
    self: ProcessGroup,
    output_tensors: Any,
    input_tensors: Any,
    opts: GatherOptions | int | None = None,
    timeout: timedelta | None = None,
) -> Work:
    """``gather([outputs] on the root, [] elsewhere, [tensor], opts=GatherOptions())`` or
    ``gather(outputs, tensor, root, timeout=None)``."""
    if isinstance(opts, int):
        root, tensor, seconds = opts, input_tensors, _seconds(timeout)
        outputs = _root_side(self, output_tensors, root, "gather", "output")
    else:
        opts = _options(opts, GatherOptions, "gather")
        root, tensor, seconds = opts.rootRank, _one(input_tensors, "gather", "input"), _seconds(opts.timeout)
        outputs = _root_side(self, output_tensors, root, "gather", "output")
        if outputs is not None:
            outputs = list(_one(outputs, "gather", "output"))
    with call_timeout(seconds):
        return gather(tensor, outputs, group=self, async_op=True, group_dst=root)


def _scatter(
    self: ProcessGroup,
    output_tensors: Any,
    input_tensors: Any,
    opts: ScatterOptions | int | None = None,
    timeout: timedelta | None = None,
) -> Work:
    """``scatter([tensor], [inputs] on the root, [] elsewhere, opts=ScatterOptions())`` or
    ``scatter(tensor, inputs, root, timeout=None)``."""
    if isinstance(opts, int):
        root, tensor, seconds = opts, output_tensors, _seconds(timeout)
        inputs = _root_side(self, input_tensors, root, "scatter", "input")
    else:
        opts = _options(opts, ScatterOptions, "scatter")
        root, tensor, seconds = (
            opts.rootRank,
            _one(output_tensors, "scatter", "output"),
            _seconds(opts.timeout),
        )
        inputs = _root_side(self, input_tensors, root, "scatter", "input")
        if inputs is not None:
            inputs = list(_one(inputs, "scatter", "input"))
    with call_timeout(seconds):
        return scatter(tensor, inputs, group=self, async_op=True, group_src=root)


def _reduce_scatter(
    self: ProcessGroup,
    output_tensors: Any,
    input_tensors: list,
    opts: ReduceScatterOptions | ReduceOp | None = None,
    *,
    op: ReduceOp | None = None,
    timeout: timedelta | None = None,
) -> Work:
    """``reduce_scatter([out], [[in_0, ..., in_n-1]], opts)`` or
    ``reduce_scatter(out, [in_0, ...], op=SUM, timeout=None)``."""
    if isinstance(opts, ReduceOp):
        opts, op = None, opts
    opts = _options(opts, ReduceScatterOptions, "reduce_scatter")
    reduce_op = op if op is not None else opts.reduceOp
    if isinstance(output_tensors, (list, tuple)):
        output_tensors = _one(output_tensors, "reduce_scatter", "output")
        input_tensors = _one(input_tensors, "reduce_scatter", "input")
    with call_timeout(_seconds(timeout or opts.timeout)):
        return reduce_scatter(output_tensors, input_tensors, reduce_op, group=self, async_op=True)


def _reduce_scatter_base(
    self: ProcessGroup, outputTensor: Any, inputTensor: Any, opts: ReduceScatterOptions | None = None
) -> Work:
    """Reduce ``inputTensor`` over the ranks; group rank ``i`` gets its ``i``-th block."""
    opts = _options(opts, ReduceScatterOptions, "_reduce_scatter_base")
    with call_timeout(_seconds(opts.timeout)):
        return reduce_scatter_tensor(outputTensor, inputTensor, opts.reduceOp, group=self, async_op=True)


def _reduce_scatter_tensor_coalesced(
    self: ProcessGroup, outputs: Any, inputs: Any, opts: ReduceScatterOptions | None = None
) -> Work:
    """``outputs[i]`` gets this rank's block of ``inputs[i]`` reduced over the ranks."""
    opts = _options(opts, ReduceScatterOptions, "reduce_scatter_tensor_coalesced")
    outputs, inputs = _pairs(outputs, inputs, "reduce_scatter_tensor_coalesced")
    with call_timeout(_seconds(opts.timeout)):
        works = [
            reduce_scatter_tensor(o, i, opts.reduceOp, group=self, async_op=True)
            for o, i in zip(outputs, inputs)
        ]
    return _after(works, outputs)


def _alltoall(
    self: ProcessGroup, output_tensors: Any, input_tensors: Any, opts: AllToAllOptions | None = None
) -> Work:
    """Send ``input_tensors[i]`` to group rank ``i``; receive rank ``i``'s into ``output_tensors[i]``."""
    opts = _options(opts, AllToAllOptions, "alltoall")
    with call_timeout(_seconds(opts.timeout)):
        return all_to_all(list(output_tensors), list(input_tensors), group=self, async_op=True)


def _alltoall_base(
    self: ProcessGroup,
    output: Any,
    input: Any,
    output_split_sizes: list[int],
    input_split_sizes: list[int],
    opts: AllToAllOptions | timedelta | None = None,
) -> Work:
    """All-to-all of dim-0 blocks of ``input`` into ``output`` (empty split sizes: even blocks)."""
    if not isinstance(opts, timedelta):
        opts = _options(opts, AllToAllOptions, "alltoall_base").timeout
    with call_timeout(_seconds(opts)):
        return all_to_all_single(
            output, input, list(output_split_sizes) or None, list(input_split_sizes) or None, self, True
        )


def _barrier(self: ProcessGroup, opts: BarrierOptions | timedelta | None = None) -> Work:
    """``barrier(opts=BarrierOptions())`` or ``barrier(timeout=None)``."""
    if not isinstance(opts, timedelta):
        opts = _options(opts, BarrierOptions, "barrier").timeout
    with call_timeout(_seconds(opts)):
        return barrier(group=self, async_op=True)


def _send(self: ProcessGroup, tensors: Any, dstRank: int, tag: int) -> Work:
    """Send the tensor to group rank ``dstRank``."""
    return isend(_one(tensors, "send"), group=self, tag=tag, group_dst=dstRank)


def _recv(self: ProcessGroup, tensors: Any, srcRank: int, tag: int) -> Work:
    """Receive into the tensor from group rank ``srcRank``."""
    return irecv(_one(tensors, "recv"), group=self, tag=tag, group_src=srcRank)


for _name, _method in {
    "allreduce": _allreduce,
    "allreduce_coalesced": _allreduce_coalesced,
    "broadcast": _broadcast,
    "reduce": _reduce,
    "allgather": _allgather,
    "_allgather_base": _allgather_base,
    "allgather_into_tensor_coalesced": _allgather_into_tensor_coalesced,
    "gather": _gather,
    "scatter": _scatter,
    "reduce_scatter": _reduce_scatter,
    "_reduce_scatter_base": _reduce_scatter_base,
    "reduce_scatter_tensor_coalesced": _reduce_scatter_tensor_coalesced,
    "alltoall": _alltoall,
    "alltoall_base": _alltoall_base,
    "barrier": _barrier,
    "send": _send,
    "recv": _recv,
}.items():
    _method.__name__ = _method.__qualname__ = _name
    setattr(ProcessGroup, _name, _method)
