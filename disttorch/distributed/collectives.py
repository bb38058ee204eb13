"""Tensor collectives: ``all_reduce``, ``broadcast``, ``all_gather`` ... and the barriers.

Each function mirrors its ``torch.distributed`` namesake: it works in place on
``disttorch.Tensor`` (or ``numpy.ndarray``) arguments, takes global ranks for ``src``/``dst``,
and with ``async_op=True`` returns a :class:`~disttorch.distributed.engine.work.Work` instead of
waiting. Arguments are checked here, in the caller's thread, so a wrong call raises at once
and leaves the group usable; the data movement runs on the group's communication thread
through the algorithms chosen by ``algorithms/select.py``. On ranks outside ``group`` every
function does nothing and returns ``None``, as in PyTorch.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Sequence

import numpy as np

from .algorithms import select
from .base.errors import DistTimeoutError
from .comm_record import record
from .engine.peer_channel import Signature
from .engine.process_group import ProcessGroup
from .engine.work import Work
from .groups import collective_root, member_group
from .reduce_ops import ReduceOp
from .tensor_io import Flat, array_of

__all__ = [
    "all_reduce",
    "broadcast",
    "reduce",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "gather",
    "scatter",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "monitored_barrier",
]


def _reduce_op(op: Any, dtype: np.dtype, collective: str) -> tuple[ReduceOp, np.ufunc]:
    if not isinstance(op, ReduceOp):
        raise TypeError(f"op must be a dist.ReduceOp (e.g. dist.ReduceOp.SUM), got {op!r}")
    return op, op.ufunc(dtype, collective)


def _agree_on_signature(ch) -> None:
    """Every rank learns every rank's signature, root included, and raises
    ``CollectiveMismatchError`` naming both sides if one differs: the first step of a rooted
    collective (broadcast, reduce, gather, scatter), and all an empty one does.

    Without it, ranks that disagree can all finish the call: when every rank names itself
    as the root, or has nothing to send (an empty tensor of another dtype or reduce op), no
    message arrives to check, and the mismatch surfaced one collective later, or never. A
    rank that finishes this all-gather holds the signature of every rank, so every rank
    raises at this call (one tiny all-gather: one exchange on 2 ranks, log2(n) rounds or
    n - 1 ring steps on more)."""
    if ch.size == 1:
        return
    mine = np.array(ch.signature, np.int64)
    table = np.zeros((ch.size, mine.size), np.int64)
    table[ch.rank] = mine
    select.all_gather(ch, table.reshape(-1), [mine.size] * ch.size)
    for peer, theirs in enumerate(table):
        if not np.array_equal(theirs, mine):
            raise ch.disagreement(peer, Signature(*(int(v) for v in theirs)))


def _finish_average(op: ReduceOp, buf: np.ndarray, size: int) -> None:
    if op is ReduceOp.AVG:
        np.divide(buf, size, out=buf)


def _same_dtype(arrays: Sequence[np.ndarray], dtype: np.dtype, what: str) -> None:
    for i, a in enumerate(arrays):
        if a.dtype != dtype:
            raise ValueError(
                f"Invalid usage of tensors with different dtypes: {what}[{i}] has dtype {a.dtype} "
                f"but the input tensor has {dtype}; all tensors of a collective must share a dtype"
            )


def _list_of(arrays: Any, size: int, what: str, wrong_length: str) -> list:
    """``arrays``, one tensor per rank of the group (``size``): a ``TypeError`` for anything
    but a list or tuple, and gloo's ``RuntimeError`` ``wrong_length`` (a format string of
    ``got`` and ``size``) for a list of another length."""
    if not isinstance(arrays, (list, tuple)):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{what}` of type List[torch.Tensor] "
            f"but got {type(arrays)} instead."
        )
    if len(arrays) != size:
        raise RuntimeError(wrong_length.format(got=len(arrays), size=size))
    return list(arrays)


def _shape(a: np.ndarray) -> str:
    return "(" + ", ".join(str(d) for d in a.shape) + ")"


def _same_size(arrays: Sequence[np.ndarray], like: np.ndarray, op: str) -> None:
    """Gloo's ``RuntimeError`` for the first of ``arrays`` whose number of elements differs
    from ``like``'s (collective ``op``, gloo's name): ``invalid tensor size at index 1
    (expected (3), got (4))``. Shapes of equal size are taken, where gloo wants equal shapes."""
    for i, a in enumerate(arrays):
        if a.size != like.size:
            raise RuntimeError(
                f"ProcessGroupGloo::{op}: invalid tensor size at index {i} "
                f"(expected {_shape(like)}, got {_shape(a)})"
            )


def all_reduce(tensor: Any, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False) -> Work | None:
    """Reduce ``tensor`` over all ranks of ``group``; every rank ends with the result in place.

    Args:
        tensor: input and output (``disttorch.Tensor`` or ``numpy.ndarray``).
        op: how values combine (``ReduceOp.AVG`` needs a floating dtype).
        group: the process group (default: the default group).
        async_op: return a ``Work`` instead of waiting.

    Every rank ends with bitwise identical values, whatever the algorithm. A sparse COO
    tensor is summed as gloo does (``ReduceOp.SUM`` only): it becomes the coalesced sum.
    """
    record("c10d.allreduce_")
    if getattr(tensor, "is_sparse", False):
        from .sparse_collectives import all_reduce_sparse

        return all_reduce_sparse(tensor, op, group, async_op)
    pg = member_group(group, "all_reduce")
    if pg is None:
        return None
    flat = Flat(tensor)
    op, ufunc = _reduce_op(op, flat.flat.dtype, "all_reduce")

    def body(ch) -> None:
        if flat.flat.size:
            select.all_reduce(ch, flat.flat, ufunc)
            _finish_average(op, flat.flat, ch.size)
        else:
            _agree_on_signature(ch)
        flat.write_back()

    return pg.collective(
        "all_reduce", flat.flat.dtype, flat.flat.size, -1, body, [tensor], async_op, redop=op.name
    )


def broadcast(
    tensor: Any, src: int | None = None, group=None, async_op: bool = False, group_src: int | None = None
) -> Work | None:
    """Copy ``tensor`` from global rank ``src`` (or ``group``'s rank ``group_src``) into
    ``tensor`` on every rank of ``group``."""
    record("c10d.broadcast_")
    pg = member_group(group, "broadcast")
    if pg is None:
        return None
    root = collective_root(pg, src, group_src, "broadcast")
    flat = Flat(tensor)

    def body(ch) -> None:
        _agree_on_signature(ch)
        if flat.flat.size:
            select.broadcast(ch, flat.flat, root)
        if ch.rank != root:
            flat.write_back()

    return pg.collective("broadcast", flat.flat.dtype, flat.flat.size, root, body, [tensor], async_op)


def reduce(
    tensor: Any,
    dst: int | None = None,
    op: ReduceOp = ReduceOp.SUM,
    group=None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    """Reduce ``tensor`` over all ranks into ``tensor`` on global rank ``dst`` (or ``group``'s
    rank ``group_dst``).

    Tensors on the other ranks are left unchanged (the algorithms work on a copy there).
    """
    record("c10d.reduce_")
    pg = member_group(group, "reduce")
    if pg is None:
        return None
    root = collective_root(pg, dst, group_dst, "reduce")
    flat = Flat(tensor, write=pg.rank() == root)
    op, ufunc = _reduce_op(op, flat.flat.dtype, "reduce")
    if pg.rank() != root and flat.is_view:
        flat.flat = flat.flat.copy()

    def body(ch) -> None:
        _agree_on_signature(ch)
        if flat.flat.size:
            select.reduce(ch, flat.flat, ufunc, root)
        if ch.rank == root:
            _finish_average(op, flat.flat, ch.size)
            flat.write_back()

    return pg.collective(
        "reduce", flat.flat.dtype, flat.flat.size, root, body, [tensor], async_op, redop=op.name
    )


def all_gather(tensor_list: list, tensor: Any, group=None, async_op: bool = False) -> Work | None:
    """Gather ``tensor`` from every rank into ``tensor_list`` (entry ``i`` from group rank ``i``)."""
    record("c10d.allgather_")
    pg = member_group(group, "all_gather")
    if pg is None:
        return None
    size, n = pg.size(), array_of(tensor).size
    outputs = [
        Flat(t, f"tensor_list[{i}]", read=False)
        for i, t in enumerate(
            _list_of(
                tensor_list,
                size,
                "tensor_list",
                "ProcessGroupGloo::allgather: invalid output tensor list at index 0 "
                "(expected length {size}, got {got})",
            )
        )
    ]
    source = Flat(tensor, write=False)
    _same_dtype([o.flat for o in outputs], source.flat.dtype, "tensor_list")
    _same_size([o.array for o in outputs], source.array, "allgather")

    def body(ch) -> None:
        buf = np.empty(size * n, source.flat.dtype)
        buf[ch.rank * n : (ch.rank + 1) * n] = source.flat
        if n:
            select.all_gather(ch, buf, [n] * size)
        else:
            _agree_on_signature(ch)
        for i, o in enumerate(outputs):
            o.flat[...] = buf[i * n : (i + 1) * n]
            o.write_back()

    return pg.collective("all_gather", source.flat.dtype, n, -1, body, tensor_list, async_op)


def all_gather_into_tensor(
    output_tensor: Any, input_tensor: Any, group=None, async_op: bool = False
) -> Work | None:
    """Gather ``input_tensor`` from every rank into ``output_tensor``, concatenated by rank.

    ``output_tensor`` holds ``world_size`` times the elements of ``input_tensor`` (shaped
    ``(world_size * n, ...)`` or ``(world_size, n, ...)``).
    """
    record("c10d._allgather_base_")
    pg = member_group(group, "all_gather_single")
    if pg is None:
        return None
    size = pg.size()
    source = Flat(input_tensor, "input_tensor", write=False)
    out = Flat(output_tensor, "output_tensor", read=False)
    n = source.flat.size
    _same_dtype([out.flat], source.flat.dtype, "output_tensor")
    if out.flat.size != size * n:
        raise RuntimeError(
            f"ProcessGroupGloo::allgather: output_tensor has {out.flat.size} elements but must hold "
            f"world_size ({size}) x input_tensor's {n} = {size * n}"
        )

    def body(ch) -> None:
        out.flat[ch.rank * n : (ch.rank + 1) * n] = source.flat
        if n:
            select.all_gather(ch, out.flat, [n] * size)
        else:
            _agree_on_signature(ch)
        out.write_back()

    return pg.collective("all_gather_into_tensor", source.flat.dtype, n, -1, body, [output_tensor], async_op)


def _reduce_scatter(
    name: str, pg, out: Flat, buf: np.ndarray, op: ReduceOp, result: list, async_op: bool
) -> Work | None:
    op, ufunc = _reduce_op(op, buf.dtype, name)
    n, size = out.flat.size, pg.size()

    def body(ch) -> None:
        if buf.size:
            select.reduce_scatter(ch, buf, ufunc, [n] * size)
        else:
            _agree_on_signature(ch)
        block = buf[ch.rank * n : (ch.rank + 1) * n]
        _finish_average(op, block, size)
        out.flat[...] = block
        out.write_back()

    return pg.collective(name, buf.dtype, buf.size, -1, body, result, async_op, redop=op.name)


def reduce_scatter(
    output: Any, input_list: list, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False
) -> Work | None:
    """Reduce ``input_list`` element-wise over all ranks; group rank ``i`` gets entry ``i``."""
    record("c10d.reduce_scatter_")
    pg = member_group(group, "reduce_scatter")
    if pg is None:
        return None
    out = Flat(output, "output", read=False)
    inputs = [
        array_of(t, f"input_list[{i}]")
        for i, t in enumerate(
            _list_of(
                input_list,
                pg.size(),
                "input_list",
                "invalid input tensor list size, must be world size ({size}), got {got}",
            )
        )
    ]
    _same_dtype(inputs, out.flat.dtype, "input_list")
    _same_size(inputs, out.array, "reduce_scatter")
    buf = np.concatenate([a.reshape(-1) for a in inputs]) if inputs else out.flat[:0]
    return _reduce_scatter("reduce_scatter", pg, out, buf, op, [output], async_op)


def reduce_scatter_tensor(
    output: Any, input: Any, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False
) -> Work | None:
    """Reduce ``input`` (``world_size`` blocks) over all ranks; group rank ``i`` gets block ``i``."""
    record("c10d._reduce_scatter_base_")
    pg = member_group(group, "reduce_scatter_single")
    if pg is None:
        return None
    out = Flat(output, "output", read=False)
    source = array_of(input, "input")
    _same_dtype([source], out.flat.dtype, "input")
    if source.size != pg.size() * out.flat.size:
        raise RuntimeError(
            f"ProcessGroupGloo::reduce_scatter: input has {source.size} elements but must hold world_size "
            f"({pg.size()}) x output's {out.flat.size} = {pg.size() * out.flat.size}"
        )
    buf = np.array(source.reshape(-1), copy=True)
    return _reduce_scatter("reduce_scatter_tensor", pg, out, buf, op, [output], async_op)


def _root_list(
    pg, root: int, tensors: list | None, name: str, words: tuple, local: np.ndarray, **flat_options: bool
) -> list | None:
    """The root's ``world_size`` tensors of ``name`` (gather's outputs, scatter's inputs) as
    Flats, checked against the local tensor's dtype and size; ``None`` on the other ranks,
    where passing them is an error. ``words``: gloo's name of the collective, the root's role
    and the list's role ("output", "input"), for PyTorch's messages."""
    op, role, kind = words
    if pg.rank() != root:
        if tensors:
            raise ValueError(f"Argument ``{name}`` must NOT be specified on non-{role} ranks.")
        return None
    if not tensors:
        raise ValueError(f"Argument ``{name}`` must be specified on {role} rank.")
    wrong_length = (
        f"ProcessGroupGloo::{op}: Incorrect {kind} list size {{got}}. "
        f"{kind.capitalize()} list size should be {{size}}, same as size of the process group."
    )
    flats = [
        Flat(t, f"{name}[{i}]", **flat_options)
        for i, t in enumerate(_list_of(tensors, pg.size(), name, wrong_length))
    ]
    _same_dtype([f.flat for f in flats], local.dtype, name)
    _same_size([f.array for f in flats], local, op)
    return flats


def gather(
    tensor: Any,
    gather_list: list | None = None,
    dst: int | None = None,
    group=None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    """Collect ``tensor`` from every rank into ``gather_list`` on global rank ``dst`` (or
    ``group``'s rank ``group_dst``).

    ``gather_list`` (``world_size`` tensors the size of ``tensor``) is required on ``dst``
    and must be ``None`` elsewhere.
    """
    record("c10d.gather_")
    pg = member_group(group, "gather")
    if pg is None:
        return None
    root = collective_root(pg, dst, group_dst, "gather")
    source = Flat(tensor, write=False)
    outputs = _root_list(
        pg, root, gather_list, "gather_list", ("gather", "destination", "output"), source.array, read=False
    )

    def body(ch) -> None:
        _agree_on_signature(ch)
        if source.flat.size:
            select.gather(ch, source.flat, [o.flat for o in outputs] if outputs else None, root)
        elif outputs:
            outputs[ch.rank].flat[...] = source.flat
        for o in outputs or ():
            o.write_back()

    return pg.collective("gather", source.flat.dtype, source.flat.size, root, body, gather_list, async_op)


def scatter(
    tensor: Any,
    scatter_list: list | None = None,
    src: int | None = None,
    group=None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    """Send ``scatter_list[i]`` from global rank ``src`` (or ``group``'s rank ``group_src``)
    into ``tensor`` on group rank ``i``.

    ``scatter_list`` is required on ``src`` and must be ``None`` elsewhere.
    """
    record("c10d.scatter_")
    pg = member_group(group, "scatter")
    if pg is None:
        return None
    root = collective_root(pg, src, group_src, "scatter")
    out = Flat(tensor, read=False)
    sources = _root_list(
        pg, root, scatter_list, "scatter_list", ("scatter", "source", "input"), out.array, write=False
    )

    def body(ch) -> None:
        _agree_on_signature(ch)
        if out.flat.size:
            select.scatter(ch, [s.flat for s in sources] if sources else None, out.flat, root)
        out.write_back()

    return pg.collective("scatter", out.flat.dtype, out.flat.size, root, body, [tensor], async_op)


_ALLTOALL_LENGTH = "ProcessGroupGloo::alltoall: %s tensor list size {got} does not match world size {size}"


def all_to_all(
    output_tensor_list: list, input_tensor_list: list, group=None, async_op: bool = False
) -> Work | None:
    """Send ``input_tensor_list[i]`` to group rank ``i``; receive rank ``i``'s into
    ``output_tensor_list[i]``. Sizes may differ between pairs of ranks."""
    record("c10d.alltoall_")
    pg = member_group(group, "all_to_all")
    if pg is None:
        return None
    size = pg.size()
    sources = [
        Flat(t, f"input_tensor_list[{i}]", write=False)
        for i, t in enumerate(
            _list_of(input_tensor_list, size, "input_tensor_list", _ALLTOALL_LENGTH % "input")
        )
    ]
    outputs = [
        Flat(t, f"output_tensor_list[{i}]", read=False)
        for i, t in enumerate(
            _list_of(output_tensor_list, size, "output_tensor_list", _ALLTOALL_LENGTH % "output")
        )
    ]
    dtype = sources[0].flat.dtype
    _same_dtype([s.flat for s in sources], dtype, "input_tensor_list")
    _same_dtype([o.flat for o in outputs], dtype, "output_tensor_list")

    def finish() -> None:
        for o in outputs:
            o.write_back()

    return _all_to_all(
        pg,
        "all_to_all",
        [s.flat for s in sources],
        [o.flat for o in outputs],
        finish,
        output_tensor_list,
        async_op,
    )


def _all_to_all(
    pg, name: str, send: list[np.ndarray], recv: list[np.ndarray], finish: Any, result: Any, async_op: bool
) -> Work | None:
    _check_own_block(name, pg.rank(), send, recv)

    def body(ch) -> None:
        if ch.size > 1:
            select.all_to_all(ch, send, recv)
        else:
            recv[0][...] = send[0]
        finish()

    return pg.collective(name, send[0].dtype, -1, -1, body, result, async_op)


def _check_own_block(name: str, me: int, send: list[np.ndarray], recv: list[np.ndarray]) -> None:
    """Gloo's local check of the block group rank ``me`` keeps for itself: a ``RuntimeError``
    before any message is sent, so the peers never hear of it and the group stays usable
    (a corrected call on this rank meets theirs)."""
    if send[me].size == recv[me].size:
        return
    if name == "all_to_all_single":
        check, hint = (
            "[enforce fail] inLengthPerRank[myRank] == outLengthPerRank[myRank]",
            f"input_split_sizes[{me}] must equal output_split_sizes[{me}]",
        )
    else:
        check, hint = (
            f"ProcessGroupGloo::alltoall: invalid tensor size at index {me}",
            f"input_tensor_list[{me}] and output_tensor_list[{me}] must have as many elements",
        )
    raise RuntimeError(
        f"{check}: group rank {me} sends {send[me].size} elements to itself but its receive "
        f"block for itself holds {recv[me].size}; {hint}"
    )


def all_to_all_single(
    output: Any,
    input: Any,
    output_split_sizes: list[int] | None = None,
    input_split_sizes: list[int] | None = None,
    group=None,
    async_op: bool = False,
) -> Work | None:
    """All-to-all on single tensors split along dim 0.

    Rows ``input_split_sizes[i]`` of ``input`` go to group rank ``i``; rows from rank ``i``
    land in the ``output_split_sizes[i]`` rows of ``output``. Without split sizes dim 0 is
    split evenly.
    """
    record("c10d.alltoall_base_")
    pg = member_group(group, "all_to_all_single")
    if pg is None:
        return None
    size = pg.size()
    source = Flat(input, "input", write=False)
    out = Flat(output, "output", read=False)
    _same_dtype([out.flat], source.flat.dtype, "output")

    def blocks(flat: Flat, splits: list[int] | None, name: str) -> list[np.ndarray]:
        rows = flat.array.shape[0] if flat.array.ndim else 1
        row = flat.flat.size // rows if rows else 0
        if splits is None:
            if rows % size:
                raise ValueError(
                    f"{name} has {rows} rows, not divisible by the group size {size}; give split sizes"
                )
            splits = [rows // size] * size
        if len(splits) != size or sum(splits) != rows or min(splits) < 0:
            raise ValueError(
                f"{name} split sizes {splits} must be {size} non-negative numbers summing to {rows}"
            )
        edges = np.cumsum([0, *splits]) * row
        return [flat.flat[a:b] for a, b in zip(edges[:-1], edges[1:])]

    send = blocks(source, input_split_sizes, "input")
    recv = blocks(out, output_split_sizes, "output")
    return _all_to_all(pg, "all_to_all_single", send, recv, out.write_back, [output], async_op)


def barrier(
    group=None, async_op: bool = False, device_ids: Any = None, timeout: timedelta | None = None
) -> Work | None:
    """Block until every rank of ``group`` has reached this barrier; with ``timeout``, raise
    ``TimeoutError`` when it takes longer (instead of the group's own timeout)."""
    pg = member_group(group, "barrier")
    if pg is None:
        return None
    token = np.zeros(1, np.uint8)
    work = pg.collective(
        "barrier",
        token.dtype,
        1,
        -1,
        lambda ch: select.barrier(ch) if ch.size > 1 else None,
        None,
        async_op or timeout is not None,
    )
    if async_op or timeout is None:
        return work
    work.wait(timeout=timeout)
    return None


def monitored_barrier(group=None, timeout: timedelta | None = None, wait_all_ranks: bool = False) -> None:
    """A barrier that names the ranks that did not reach it within ``timeout``.

    Rank 0 of the group waits for every other rank, then releases them. If some do not
    arrive in time, rank 0 raises ``DistTimeoutError`` naming the first one (or, with
    ``wait_all_ranks=True``, all of them), e.g. ``"Ranks 1, 3 failed to pass
    monitoredBarrier in 5.0 s"``, and the other ranks raise the same report.
    """
    pg = member_group(group, "monitored_barrier")
    if pg is None:
        return None
    seconds = (
        pg.timeout
        if timeout is None
        else (timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout))
    )
    token = np.zeros(1, np.uint8)

    def body(ch) -> None:
        if ch.rank != 0:
            ch.send(0, token)
            ch.recv(0, token)
            return
        missing = []
        for peer in range(1, ch.size):
            try:
                ch.recv(peer, token)
            except DistTimeoutError:
                missing.append(peer)
                if not wait_all_ranks:
                    break
        if missing:
            names = ", ".join(str(pg.ranks[p]) for p in missing)
            raise DistTimeoutError(
                f"Rank{'s' if len(missing) > 1 else ''} {names} failed to pass "
                f"monitoredBarrier in {seconds:g} s"
            )
        for peer in range(1, ch.size):
            ch.send(peer, token)

    # Non-zero ranks wait longer than rank 0, so rank 0's report (naming who is missing)
    # reaches them before their own timeout fires.
    wait = seconds if pg.rank() == 0 else 2 * seconds + 5
    pg.collective("monitored_barrier", token.dtype, 1, -1, body, None, False, timeout=wait)
    return None


def _group_monitored_barrier(
    self: ProcessGroup, timeout: timedelta | None = None, wait_all_ranks: bool = False
) -> None:
    """``ProcessGroup.monitored_barrier``: :func:`monitored_barrier` over this group, as
    PyTorch's method (Lightning's barrier without a timeout calls it on a group of its own)."""
    monitored_barrier(self, timeout, wait_all_ranks)


ProcessGroup.monitored_barrier = _group_monitored_barrier
