"""Ring algorithms: bandwidth-optimal collectives for large buffers.

The ``n`` ranks stand in a circle. In every step each rank sends one block to its right
neighbour ``(rank + 1) % n`` and receives one block from its left neighbour
``(rank - 1) % n``, all at the same time (``ch.sendrecv``), so every link carries data in
every step and no rank is a bottleneck.

All-reduce = reduce-scatter, then all-gather
--------------------------------------------
The buffer of ``N`` elements is cut into ``n`` blocks, block ``b`` being "owned" by rank
``b`` at the end (sizes differ by at most one element when ``n`` does not divide ``N``).

*Reduce-scatter* (``n - 1`` steps). In step ``k`` rank ``r`` sends block ``(r - k - 1) % n``
and receives block ``(r - k - 2) % n``, which it combines into its own copy. A block picks
up one rank's contribution per hop. With 4 ranks (``send/add`` = block sent / block
received and reduced)::

    step  rank 0         rank 1         rank 2         rank 3
    0     send 3/add 2   send 0/add 3   send 1/add 0   send 2/add 1
    1     send 2/add 1   send 3/add 2   send 0/add 3   send 1/add 0
    2     send 1/add 0   send 2/add 1   send 3/add 2   send 0/add 3

Follow block 0: rank 1 sends its x1[0] to rank 2, which holds x2[0] + x1[0]; rank 3 adds
x3[0]; rank 0 adds x0[0]. After step 2 rank ``r`` holds the complete block ``r``.

*All-gather* (``n - 1`` steps). In step ``k`` rank ``r`` sends block ``(r - k) % n`` (its
own first, then the one it just received) and receives block ``(r - k - 1) % n``, copying
it in place::

    step  rank 0         rank 1         rank 2         rank 3
    0     send 0/copy 3  send 1/copy 0  send 2/copy 1  send 3/copy 2
    1     send 3/copy 2  send 0/copy 3  send 1/copy 0  send 2/copy 1
    2     send 2/copy 1  send 3/copy 2  send 0/copy 3  send 1/copy 0

Cost for ``N`` bytes on ``n`` ranks: ``2 (n - 1)`` steps, and every rank sends (and
receives) ``2 (n - 1) / n * N`` bytes, which no all-reduce can beat; it is why the ring
wins for large buffers and loses for small ones (``2 (n - 1)`` latencies).
:func:`describe_all_reduce` prints the table above for any ``n``.

Bitwise identical results on every rank: each element is reduced exactly once, by the
chain of ranks its block travels along in reduce-scatter; the all-gather then only copies
bytes. So all ranks hold the very same bits, whatever the op's rounding or NaN handling.
(The order of that chain differs from block to block; see ``deterministic.py`` for a
result that does not depend on the algorithm.)

Segments
--------
Each block is cut into pieces of at most :data:`SEGMENT_BYTES` and every step moves its
block piece by piece, one ``sendrecv`` each, so a large block streams as a sequence of
messages. One scratch piece receives all incoming data (no allocation per step, nothing
proportional to the buffer), and a received piece is still in cache when it is reduced.
Every block is cut into the same number of pieces, so the piece a rank sends and the
piece it receives always pair up, even with unequal blocks.

Seeing the steps
----------------
Set the logger ``disttorch.distributed.algorithms`` to ``DEBUG`` to log every step, or
pass ``on_step=callback``; after each step the callback gets
``(phase, step, send_peer, send_chunk_index, recv_peer, recv_chunk_index, buf)`` with
``phase`` ``"reduce_scatter"`` or ``"all_gather"`` and ``step`` counted from 0. Without a
callback the per-step cost is one ``is None`` test.

Also here: :func:`broadcast` (scatter the blocks from the root, then all-gather) and
:func:`reduce` (reduce-scatter, then gather the blocks to the root), both sending about
``2 (n - 1) / n * N`` bytes from the busiest rank instead of ``(n - 1) * N``.
"""

from __future__ import annotations

import logging
from typing import Callable, Optional, Sequence

import numpy as np

from . import star
from ._blocks import (
    block_offsets,
    check_buffer,
    even_counts,
    largest_piece,
    piece_bounds,
    segment_count,
)
from .channel import Channel

logger = logging.getLogger("disttorch.distributed.algorithms")

#: Largest message (and scratch buffer) of one ring step, in bytes. Measured with the ZeroMQ
#: transport on the 2-core development machine (ring all-reduce of 16 and 64 MiB on 2 and
#: 4 ranks, best of 4 runs on a busy machine): 256 KiB pieces reached about half the bus
#: bandwidth of 1-4 MiB pieces (per-message overhead), 8 MiB pieces lost 10-40 %; 2 MiB was
#: best or within noise of the best everywhere. A piece and the slice it is added into then
#: sit in the L3 cache while they are combined.
SEGMENT_BYTES = 2 << 20

#: ``on_step(phase, step, send_peer, send_chunk_index, recv_peer, recv_chunk_index, buf)``
StepCallback = Callable[[str, int, int, int, int, int, np.ndarray], None]

Op = Callable[..., np.ndarray]


def reduce_scatter_blocks(rank: int, step: int, size: int) -> tuple[int, int]:
    """Block ``rank`` sends and block it receives (and reduces) in reduce-scatter ``step``."""
    return (rank - step - 1) % size, (rank - step - 2) % size


def all_gather_blocks(rank: int, step: int, size: int) -> tuple[int, int]:
    """Block ``rank`` sends and block it receives (and keeps) in all-gather ``step``."""
    return (rank - step) % size, (rank - step - 1) % size


def reduce_scatter(
    ch: Channel,
    buf: np.ndarray,
    op: Op,
    counts: Sequence[int],
    *,
    segment_bytes: Optional[int] = None,
    on_step: Optional[StepCallback] = None,
) -> None:
    """Reduce ``buf`` across ranks so that block ``ch.rank`` holds the result.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): 1-D contiguous; ``ch.size`` consecutive blocks of ``counts[i]``
            elements. On return block ``ch.rank`` holds the reduction of that block over all
            ranks; the other blocks hold partial results.
        op (numpy.ufunc): ``np.add``, ``np.multiply``, ``np.minimum`` or ``np.maximum``.
        counts (sequence of int): elements per block; may be unequal or zero.
        segment_bytes (int, optional): largest message; default :data:`SEGMENT_BYTES`.
        on_step (callable, optional): called after every step, see the module docstring.
    """
    check_buffer(buf)
    n, rank = ch.size, ch.rank
    offsets = block_offsets(counts, buf.size, n)
    if n == 1 or buf.size == 0:
        return
    right, left = (rank + 1) % n, (rank - 1) % n
    if segment_bytes is None:
        segment_bytes = SEGMENT_BYTES
    pieces = segment_count(counts, buf.itemsize, segment_bytes)
    scratch = np.empty(largest_piece(counts, pieces), dtype=buf.dtype)
    debug = logger.isEnabledFor(logging.DEBUG)
    for step in range(n - 1):
        send_block, recv_block = reduce_scatter_blocks(rank, step, n)
        send_cuts = piece_bounds(offsets[send_block], counts[send_block], pieces)
        recv_cuts = piece_bounds(offsets[recv_block], counts[recv_block], pieces)
        for p in range(pieces):
            acc = buf[recv_cuts[p] : recv_cuts[p + 1]]
            incoming = scratch[: acc.size]
            ch.sendrecv(right, buf[send_cuts[p] : send_cuts[p + 1]], left, incoming)
            op(acc, incoming, out=acc)
        if debug:
            logger.debug(
                "ring reduce_scatter rank %d step %d/%d: sent block %d to rank %d, "
                "reduced block %d from rank %d",
                rank,
                step,
                n - 1,
                send_block,
                right,
                recv_block,
                left,
            )
        if on_step is not None:
            on_step("reduce_scatter", step, right, send_block, left, recv_block, buf)


def all_gather(
    ch: Channel,
    buf: np.ndarray,
    counts: Sequence[int],
    *,
    segment_bytes: Optional[int] = None,
    on_step: Optional[StepCallback] = None,
) -> None:
    """Fill every block of ``buf`` with the block its rank holds.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): 1-D contiguous; ``ch.size`` blocks of ``counts[i]`` elements.
            Block ``ch.rank`` is filled on entry; all blocks are filled on return.
        counts (sequence of int): elements per block; may be unequal or zero.
        segment_bytes (int, optional): largest message; default :data:`SEGMENT_BYTES`.
        on_step (callable, optional): called after every step, see the module docstring.
    """
    check_buffer(buf)
    n, rank = ch.size, ch.rank
    offsets = block_offsets(counts, buf.size, n)
    if n == 1 or buf.size == 0:
        return
    right, left = (rank + 1) % n, (rank - 1) % n
    if segment_bytes is None:
        segment_bytes = SEGMENT_BYTES
    pieces = segment_count(counts, buf.itemsize, segment_bytes)
    debug = logger.isEnabledFor(logging.DEBUG)
    for step in range(n - 1):
        send_block, recv_block = all_gather_blocks(rank, step, n)
        send_cuts = piece_bounds(offsets[send_block], counts[send_block], pieces)
        recv_cuts = piece_bounds(offsets[recv_block], counts[recv_block], pieces)
        for p in range(pieces):
            ch.sendrecv(
                right,
                buf[send_cuts[p] : send_cuts[p + 1]],
                left,
                buf[recv_cuts[p] : recv_cuts[p + 1]],
            )
        if debug:
            logger.debug(
                "ring all_gather rank %d step %d/%d: sent block %d to rank %d, "
                "received block %d from rank %d",
                rank,
                step,
                n - 1,
                send_block,
                right,
                recv_block,
                left,
            )
        if on_step is not None:
            on_step("all_gather", step, right, send_block, left, recv_block, buf)


def all_reduce(
    ch: Channel,
    buf: np.ndarray,
    op: Op,
    *,
    segment_bytes: Optional[int] = None,
    on_step: Optional[StepCallback] = None,
) -> None:
    """Reduce ``buf`` over all ranks, in place, leaving identical bits on every rank.

    Reduce-scatter over ``n`` near-equal blocks, then all-gather them.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): 1-D contiguous, same size and dtype on every rank.
        op (numpy.ufunc): ``np.add``, ``np.multiply``, ``np.minimum`` or ``np.maximum``.
        segment_bytes (int, optional): largest message; default :data:`SEGMENT_BYTES`.
        on_step (callable, optional): called after every step, see the module docstring.

    Example::

        >>> ring.all_reduce(ch, grads, np.add)   # grads now holds the sum over ranks
    """
    check_buffer(buf)
    counts = even_counts(buf.size, ch.size)
    reduce_scatter(ch, buf, op, counts, segment_bytes=segment_bytes, on_step=on_step)
    all_gather(ch, buf, counts, segment_bytes=segment_bytes, on_step=on_step)


def broadcast(ch: Channel, buf: np.ndarray, root: int, *, segment_bytes: Optional[int] = None) -> None:
    """Copy ``buf`` from ``root`` to every rank: scatter its blocks, then all-gather.

    The root sends ``(n - 1) / n * N`` bytes in the scatter and every rank
    ``(n - 1) / n * N`` in the all-gather: ``n - 1`` messages from the root plus ``n - 1``
    ring steps.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): 1-D contiguous; the data on ``root``, overwritten elsewhere.
        root (int): rank that holds the data.
    """
    check_buffer(buf)
    counts = even_counts(buf.size, ch.size)
    star.scatter_blocks(ch, buf, counts, root)
    all_gather(ch, buf, counts, segment_bytes=segment_bytes)


def reduce(
    ch: Channel,
    buf: np.ndarray,
    op: Op,
    root: int,
    *,
    segment_bytes: Optional[int] = None,
) -> None:
    """Reduce ``buf`` over all ranks into ``buf`` on ``root``: reduce-scatter, then gather.

    On ranks other than ``root``, ``buf`` is used as scratch.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): 1-D contiguous, same size and dtype on every rank.
        op (numpy.ufunc): ``np.add``, ``np.multiply``, ``np.minimum`` or ``np.maximum``.
        root (int): rank that receives the result.
    """
    check_buffer(buf)
    counts = even_counts(buf.size, ch.size)
    reduce_scatter(ch, buf, op, counts, segment_bytes=segment_bytes)
    star.gather_blocks(ch, buf, counts, root)


def describe_all_reduce(size: int) -> str:
    """Return the ring all-reduce schedule for ``size`` ranks as a text table.

    Each cell shows the block a rank sends to its right neighbour and the block it
    receives from its left neighbour in that step.

    Example::

        >>> print(describe_all_reduce(3))
        ring all_reduce on 3 ranks: every step, rank r sends to r+1 and receives from r-1
        phase           step  rank 0         rank 1         rank 2
        reduce_scatter  0     send 2/add 1   send 0/add 2   send 1/add 0
        reduce_scatter  1     send 1/add 0   send 2/add 1   send 0/add 2
        all_gather      0     send 0/copy 2  send 1/copy 0  send 2/copy 1
        all_gather      1     send 2/copy 1  send 0/copy 2  send 1/copy 0
    """
    if size < 1:
        raise ValueError(f"size must be at least 1, got {size}")
    lines = [
        f"ring all_reduce on {size} ranks: every step, rank r sends to r+1 and receives from r-1",
        f"{'phase':<16}{'step':<6}" + "".join(f"{f'rank {r}':<15}" for r in range(size)),
    ]
    for phase, blocks, verb in (
        ("reduce_scatter", reduce_scatter_blocks, "add"),
        ("all_gather", all_gather_blocks, "copy"),
    ):
        for step in range(size - 1):
            cells = []
            for r in range(size):
                sent, received = blocks(r, step, size)
                cells.append(f"{f'send {sent}/{verb} {received}':<15}")
            lines.append(f"{phase:<16}{step:<6}" + "".join(cells))
    return "\n".join(line.rstrip() for line in lines)
