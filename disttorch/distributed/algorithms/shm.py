"""Shared-memory algorithms: collectives of the ranks of one host through one segment.

Ranks on one host need not send each other anything: they can all read and write one
piece of memory (``wire/shm.py`` makes it and hands it over). The channel offers it as
``ch.board``: each of the ``n`` ranks owns a *slot* of ``ch.board.slot_bytes`` bytes per
round (``board.slots()`` lists every rank's slot for the next round) and ``board.sync()``
is a barrier built from per-rank counters (each written only by its owner, no lock). An
algorithm is then a sequence of rounds: *write* into my slot, *sync*, *read* the others'.

All-reduce: every rank reduces its own slice of everybody's data
-----------------------------------------------------------------
A buffer of ``N`` bytes moves in rounds of at most ``slot_bytes``. In each round the
piece is cut into ``n`` slices (sizes differ by at most one element); slice ``s`` is
*owned* by rank ``s``. With 4 ranks holding ``a, b, c, d`` (slot ``r`` belongs to rank
``r``)::

    1. write   every rank copies its piece into its slot
                   slot 0: a0 a1 a2 a3   slot 1: b0 b1 b2 b3   slot 2: c0 ...   slot 3: d0 ...
       sync
    2. reduce  rank s combines slice s of the other slots into slice s of its own, in place
                   slot 0: S0 a1 a2 a3   slot 1: b0 S1 b2 b3   slot 2: .. S2 ..  slot 3: .. S3
                   (S1 = b1 + a1 + c1 + d1, computed by rank 1 alone)
       sync
    3. read    every rank copies slice s from slot s, for every s: S0 S1 S2 S3

Memory traffic of each rank, for ``N`` bytes on ``n`` ranks (the work is spread over every
core, as in the ring)::

    step     reads      writes     with 4 ranks and N = 16 MiB
    write    N          N          16 MiB in, 16 MiB out
    reduce   N          N / n      16 MiB in,  4 MiB out
    read     N          N          16 MiB in, 16 MiB out

about ``3 N`` read and ``2 N`` written whatever ``n``, against the ring's ``2 (n - 1)``
socket steps moving ``2 (n - 1) / n * N`` bytes, each copied by the kernel and ZeroMQ on
the way. A round adds two syncs (``n`` counter reads each); with ``B`` one core's copy
bandwidth, ``N`` bytes take about ``3 N / B`` plus ``2 N / slot_bytes`` syncs.

Small buffers (up to :data:`ONE_STEP_BYTES`) use the *one-step* variant: write, sync, and
every rank reduces the whole buffer from all slots itself, in slot order: one sync
instead of two, ``n`` times the reading, which for a few KiB costs less than a sync. So
do two ranks at any size: there the one-step round moves ``4 N`` bytes per rank (copy
in, read both slots, write the result), less than the two-step round's ``4.5 N``.

Every element is reduced exactly once, by its slice's owner in a fixed order (or by
everyone in slot order in the one-step variant), and then only copied: every rank holds
the same bits, run after run.

Buffers that already live in the segment: no copy in
----------------------------------------------------
A buffer that every rank keeps at the same offset of its *arena* (``wire/shm.py``; DDP
puts its gradient buckets there) need not be written into a slot: the others can read it
where it is. Then the whole buffer is one round, in place::

    sync      (tagged with the offset: every rank's buffer is complete and where expected)
    reduce    rank s combines slice s of the others' buffers into slice s of its own
    sync
    read      every rank copies slice s from rank s's buffer, for every s != me
    sync      (nobody changes its buffer while another still reads it)

Per rank ``N`` read and ``N / n`` written in the reduce, ``N`` read and written in the
read: the ``N`` bytes of the write step are saved, and with them the rounds (a buffer of
any size takes three syncs). The slices are cut piece by piece as in the copying rounds,
so each element has the same owner and the same order of reduction: the bits equal the
copying path's (on two ranks, where that path reduces in slot order, because the
reductions are commutative). Buffers up to :data:`ONE_STEP_BYTES` take the copying path.

A broadcast of such a buffer (ZeRO keeps its parameters there) needs no write at all: the
root's buffer is already where the others can read it::

    sync      (tagged with the offset)
    read      every rank but the root copies the root's buffer into its own
    sync      (the root does not change its buffer while another still reads it)

Per receiving rank ``N`` read and written, nothing by the root, two syncs whatever ``N``,
against the copying rounds' ``N`` written by the root and one sync per ``slot_bytes``.

Rounds use the two halves of each slot in turn, so a rank may write round ``k + 1``
while a slower one still reads round ``k`` (see ``wire/shm.py``): one sync per phase,
never a lock.

The other collectives are rounds of the same kind:

=================  ===========================================================  =====
collective         one round                                                    syncs
=================  ===========================================================  =====
broadcast          the root writes; the others read its slot                    1
broadcast, arena   the others read the root's buffer where it lies              2
reduce             write; each reduces its slice; the root reads all slices     2
reduce_scatter     write a piece of every block; rank s reduces block s's       1
all_gather         write my block's piece; read every block's piece             1
barrier            (nothing to move)                                            1
=================  ===========================================================  =====

Seeing the steps
----------------
Set the logger ``disttorch.distributed.algorithms`` to ``DEBUG`` to log every round, or
pass ``on_step=callback``; after each phase it gets ``(phase, round, buf)``, ``phase``
being ``"write"``, ``"reduce"`` or ``"read"``.

Every function needs the whole group on one host (``ch.board.size == ch.size``);
``hierarchical.py`` composes them with the socket algorithms across hosts.
"""

from __future__ import annotations

import logging
from typing import Callable, Optional, Sequence

import numpy as np

from ._blocks import block_offsets, check_buffer, check_root, even_counts, piece_bounds, segment_count
from .channel import Channel

logger = logging.getLogger("disttorch.distributed.algorithms")

#: Buffers up to this many bytes are all-reduced in one step (write, sync, reduce all).
ONE_STEP_BYTES = 32 << 10

#: ``on_step(phase, round, buf)``
StepCallback = Callable[[str, int, np.ndarray], None]

Op = Callable[..., np.ndarray]


def board_of(ch: Channel):
    """The channel's shared-memory board, checked to span the whole group."""
    board = getattr(ch, "board", None)
    if board is None or board.size != ch.size:
        raise ValueError(
            "the shm algorithms need every rank of the group on one host, sharing memory "
            "(DISTTORCH_SHM=1 everywhere); use 'hierarchical', 'ring' or 'tree' otherwise"
        )
    return board


def _pieces(buf: np.ndarray, per_round: int):
    """``buf`` cut into consecutive pieces of at most ``per_round`` elements."""
    per_round = max(1, per_round)
    for start in range(0, buf.size, per_round):
        yield buf[start : start + per_round]


def _view(slot: np.ndarray, dtype: np.dtype, count: int, offset: int = 0) -> np.ndarray:
    """``count`` elements of ``dtype`` at element ``offset`` of a ``uint8`` slot."""
    item = np.dtype(dtype).itemsize
    return slot[offset * item : (offset + count) * item].view(dtype)


def _reduce_into(out: np.ndarray, parts: Sequence[np.ndarray], op: Op) -> None:
    """``out = parts[0] op parts[1] op ...``, in that order."""
    np.copyto(out, parts[0])
    for p in parts[1:]:
        op(out, p, out=out)


def _trace(name: str, phase: str, rnd: int, board, buf: np.ndarray, on_step: Optional[StepCallback]) -> None:
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug("shm %s board rank %d/%d round %d: %s", name, board.rank, board.size, rnd, phase)
    if on_step is not None:
        on_step(phase, rnd, buf)


def reduce_to(board, buf: np.ndarray, op: Op, root: Optional[int], on_step=None, name="all_reduce") -> None:
    """Reduce ``buf`` over the board's ranks; the result lands in ``buf`` on board rank
    ``root``, or on every rank if ``root`` is ``None`` (other ranks' ``buf`` is scratch)."""
    n, me = board.size, board.rank
    one_step = root is None and (n == 2 or buf.nbytes <= ONE_STEP_BYTES)
    for rnd, piece in enumerate(_pieces(buf, board.slot_bytes // buf.itemsize)):
        slots = [_view(s, buf.dtype, piece.size) for s in board.slots()]
        np.copyto(slots[me], piece)
        board.sync()
        _trace(name, "write", rnd, board, buf, on_step)
        if one_step:
            _reduce_into(piece, slots, op)
            _trace(name, "reduce", rnd, board, buf, on_step)
            continue
        cuts = block_offsets(even_counts(piece.size, n), piece.size, n)
        mine = slots[me][cuts[me] : cuts[me + 1]]
        for s in range(n):  # in place: my own values first, then the others' in slot order
            if s != me:
                op(mine, slots[s][cuts[me] : cuts[me + 1]], out=mine)
        board.sync()
        _trace(name, "reduce", rnd, board, buf, on_step)
        if root is None or root == me:
            for s in range(n):
                np.copyto(piece[cuts[s] : cuts[s + 1]], slots[s][cuts[s] : cuts[s + 1]])
            _trace(name, "read", rnd, board, buf, on_step)


def broadcast_from(board, buf: np.ndarray, root: int, on_step=None) -> None:
    """Copy ``buf`` from board rank ``root`` to every board rank."""
    for rnd, piece in enumerate(_pieces(buf, board.slot_bytes // buf.itemsize)):
        slot = _view(board.slots()[root], buf.dtype, piece.size)
        if board.rank == root:
            np.copyto(slot, piece)
        board.sync()
        if board.rank != root:
            np.copyto(piece, slot)
        _trace("broadcast", "read", rnd, board, buf, on_step)


def reduce_in_arena(board, buf: np.ndarray, op: Op, at: int, on_step=None) -> None:
    """All-reduce ``buf``, which lies at offset ``at`` of this rank's arena as the others'
    buffers lie in theirs, where it is (see the module docstring)."""
    n, me = board.size, board.rank
    bufs = [v.view(buf.dtype) for v in board.arena_views(at, buf.nbytes)]
    per_round = max(1, board.slot_bytes // buf.itemsize)
    pieces = [(start, min(buf.size, start + per_round)) for start in range(0, buf.size, per_round)]
    cuts = [[a + c for c in block_offsets(even_counts(b - a, n), b - a, n)] for a, b in pieces]
    board.sync(tag=at)
    _trace("all_reduce", "write", 0, board, buf, on_step)
    for cut in cuts:  # my slice of each piece: my own values first, then the others' in slot order
        mine = bufs[me][cut[me] : cut[me + 1]]
        for s in range(n):
            if s != me:
                op(mine, bufs[s][cut[me] : cut[me + 1]], out=mine)
    board.sync()
    _trace("all_reduce", "reduce", 0, board, buf, on_step)
    for cut in cuts:
        for s in range(n):
            if s != me:
                np.copyto(buf[cut[s] : cut[s + 1]], bufs[s][cut[s] : cut[s + 1]])
    board.sync()
    _trace("all_reduce", "read", 0, board, buf, on_step)


def broadcast_in_arena(board, buf: np.ndarray, root: int, at: int, on_step=None) -> None:
    """Copy ``buf``, which lies at offset ``at`` of this rank's arena as the others'
    buffers lie in theirs, from board rank ``root`` straight out of its arena (see the
    module docstring)."""
    board.sync(tag=at)
    if board.rank != root:
        np.copyto(buf, board.arena_views(at, buf.nbytes)[root].view(buf.dtype))
    board.sync()
    _trace("broadcast", "read", 0, board, buf, on_step)


def _arena_offset(board, buf: np.ndarray) -> Optional[int]:
    """Where ``buf`` lies in this rank's arena, if a collective should use it in place
    there: larger than :data:`ONE_STEP_BYTES` and wholly in the arena; else ``None``."""
    return board.offset(buf) if buf.nbytes > ONE_STEP_BYTES else None


def all_reduce(ch: Channel, buf: np.ndarray, op: Op, *, on_step: Optional[StepCallback] = None) -> None:
    """Reduce ``buf`` over all ranks in place; every rank ends with identical bits.

    A buffer larger than :data:`ONE_STEP_BYTES` that lies in this rank's arena is reduced
    where it is (:func:`reduce_in_arena`): every rank must then hold its buffer at the
    same offset of its arena, else ``TagMismatch`` is raised.

    Args:
        ch (Channel): the group's channel; its ``board`` spans the group.
        buf (numpy.ndarray): 1-D contiguous, the same size on every rank.
        op (numpy.ufunc): ``np.add``, ``np.multiply``, ``np.minimum``, ``np.maximum``, ...
        on_step (callable, optional): called after every phase, see the module docstring.
    """
    check_buffer(buf)
    board = board_of(ch)
    if not buf.size:
        return
    at = _arena_offset(board, buf)
    if at is not None:
        reduce_in_arena(board, buf, op, at, on_step)
    else:
        reduce_to(board, buf, op, None, on_step)


def reduce(
    ch: Channel, buf: np.ndarray, op: Op, root: int, *, on_step: Optional[StepCallback] = None
) -> None:
    """Reduce ``buf`` over all ranks into ``buf`` on ``root`` (scratch on the others)."""
    check_buffer(buf)
    check_root(root, ch.size)
    board = board_of(ch)
    if buf.size:
        reduce_to(board, buf, op, root, on_step, "reduce")


def broadcast(ch: Channel, buf: np.ndarray, root: int, *, on_step: Optional[StepCallback] = None) -> None:
    """Copy ``buf`` from ``root`` to every rank.

    A buffer larger than :data:`ONE_STEP_BYTES` that lies in this rank's arena is read by
    the others where it lies in the root's (:func:`broadcast_in_arena`): every rank must
    then hold its buffer at the same offset of its arena, else ``TagMismatch`` is raised.
    """
    check_buffer(buf)
    check_root(root, ch.size)
    board = board_of(ch)
    if not buf.size:
        return
    at = _arena_offset(board, buf)
    if at is not None:
        broadcast_in_arena(board, buf, root, at, on_step)
    else:
        broadcast_from(board, buf, root, on_step)


def _block_pieces(ch: Channel, buf: np.ndarray, counts: Sequence[int], blocks_per_slot: int):
    """For the block collectives, after checking ``buf`` and ``counts``: the board, the
    bounds of each rank's block cut into pieces (``cuts[b][p]`` to ``cuts[b][p + 1]``) and
    the number of pieces, so that one piece of ``blocks_per_slot`` blocks fits a slot;
    ``None`` when ``buf`` is empty."""
    check_buffer(buf)
    board = board_of(ch)
    offsets = block_offsets(counts, buf.size, ch.size)
    if buf.size == 0:
        return None
    pieces = segment_count(counts, buf.itemsize, board.slot_bytes // blocks_per_slot)
    return board, [piece_bounds(offsets[b], counts[b], pieces) for b in range(ch.size)], pieces


def reduce_scatter(
    ch: Channel, buf: np.ndarray, op: Op, counts: Sequence[int], *, on_step: Optional[StepCallback] = None
) -> None:
    """Reduce ``buf`` (``ch.size`` blocks of ``counts[i]`` elements) so that block
    ``ch.rank`` holds the reduction of that block over all ranks.

    Each round every rank writes piece ``p`` of every block into its slot (block ``b`` at
    ``b`` times the largest piece), syncs, and reduces piece ``p`` of its own block from
    all slots. Other blocks of ``buf`` are left as they were.
    """
    plan = _block_pieces(ch, buf, counts, blocks_per_slot=ch.size)
    if plan is None:
        return
    board, cuts, pieces = plan
    n, me = ch.size, ch.rank
    width = -(-max(counts) // pieces)  # elements of the largest piece: the stride in a slot
    for p in range(pieces):
        slots = board.slots()
        for b in range(n):
            part = buf[cuts[b][p] : cuts[b][p + 1]]
            np.copyto(_view(slots[me], buf.dtype, part.size, b * width), part)
        board.sync()
        mine = buf[cuts[me][p] : cuts[me][p + 1]]
        _reduce_into(mine, [_view(s, buf.dtype, mine.size, me * width) for s in slots], op)
        _trace("reduce_scatter", "reduce", p, board, buf, on_step)


def all_gather(
    ch: Channel, buf: np.ndarray, counts: Sequence[int], *, on_step: Optional[StepCallback] = None
) -> None:
    """Fill every block of ``buf`` (laid out by ``counts``) from the rank that owns it:
    each round every rank writes a piece of its block, syncs, and copies everyone's."""
    plan = _block_pieces(ch, buf, counts, blocks_per_slot=1)
    if plan is None:
        return
    board, cuts, pieces = plan
    n, me = ch.size, ch.rank
    for p in range(pieces):
        slots = board.slots()
        own = buf[cuts[me][p] : cuts[me][p + 1]]
        np.copyto(_view(slots[me], buf.dtype, own.size), own)
        board.sync()
        for b in range(n):
            if b != me:
                part = buf[cuts[b][p] : cuts[b][p + 1]]
                np.copyto(part, _view(slots[b], buf.dtype, part.size))
        _trace("all_gather", "read", p, board, buf, on_step)


def barrier(ch: Channel) -> None:
    """Return once every rank has called it (one sync of the board)."""
    board_of(ch).sync()
