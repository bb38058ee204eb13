"""Rank-ordered reductions: the same bits whatever the algorithm, world layout or segment.

Floating-point addition is not associative: ``(a + b) + c`` and ``a + (b + c)`` can differ
in the last bit. The ring reduces each block in a different order (starting at a
different rank), the tree in a balanced order, so the algorithms agree only to rounding.
Here every element is reduced in rank order,
``((x0 op x1) op x2) ... op x(n-1)``, exactly what a sequential loop over the ranks would
compute, so the result depends only on the data: not on which algorithm the size picked,
nor on how blocks and segments were cut, nor on which hosts the ranks run.

How (reduce-scatter by direct exchange, then ring all-gather), with 4 ranks::

    1. exchange   rank r sends block b of its buffer to rank b (n - 1 pairwise steps,
                  as in pairwise.py); rank b now holds all four versions of block b:
                  rows x0[b], x1[b], x2[b], x3[b] of a staging array
    2. fold       rank b computes ((x0[b] op x1[b]) op x2[b]) op x3[b]
    3. all-gather the ring all-gather (ring.py) copies every finished block everywhere

Cost: ``2 (n - 1)`` steps and ``2 (n - 1) / n * N`` bytes sent per rank, the same as the
ring all-reduce; each rank also needs a staging array of ``n`` segments (blocks are cut
into pieces of at most ``ring.SEGMENT_BYTES``, exchanged and folded one piece at a time).
Identical bits on every rank: each block is folded once, then only copied.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np

from . import ring, star
from ._blocks import block_offsets, check_buffer, even_counts, piece_bounds, segment_count
from .channel import Channel

Op = Callable[..., np.ndarray]


def reduce_scatter(
    ch: Channel,
    buf: np.ndarray,
    op: Op,
    counts: Sequence[int],
    *,
    segment_bytes: Optional[int] = None,
) -> None:
    """Reduce ``buf`` in rank order so that block ``ch.rank`` holds the result.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): 1-D contiguous; ``ch.size`` blocks of ``counts[i]`` elements.
            On return block ``ch.rank`` holds ``x0 op x1 op ... op x(n-1)`` evaluated left to
            right; the other blocks are unchanged.
        op (numpy.ufunc): ``np.add``, ``np.multiply``, ``np.minimum`` or ``np.maximum``.
        counts (sequence of int): elements per block; may be unequal or zero.
        segment_bytes (int, optional): largest message; default ``ring.SEGMENT_BYTES``.
    """
    check_buffer(buf)
    n, rank = ch.size, ch.rank
    offsets = block_offsets(counts, buf.size, n)
    if n == 1 or buf.size == 0:
        return
    if segment_bytes is None:
        segment_bytes = ring.SEGMENT_BYTES
    pieces = segment_count(counts, buf.itemsize, segment_bytes)
    cuts = [piece_bounds(offsets[b], counts[b], pieces) for b in range(n)]
    mine = cuts[rank]
    staging = np.empty((n, -(-counts[rank] // pieces)), dtype=buf.dtype)  # row i: rank i's
    for p in range(pieces):
        out = buf[mine[p] : mine[p + 1]]
        length = out.size
        staging[rank, :length] = out
        for step in range(1, n):
            to, frm = (rank + step) % n, (rank - step) % n
            ch.sendrecv(to, buf[cuts[to][p] : cuts[to][p + 1]], frm, staging[frm, :length])
        np.copyto(out, staging[0, :length])
        for src in range(1, n):
            op(out, staging[src, :length], out=out)


def all_reduce(ch: Channel, buf: np.ndarray, op: Op, *, segment_bytes: Optional[int] = None) -> None:
    """Reduce ``buf`` over all ranks in rank order, in place, identically on every rank.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): 1-D contiguous, same size and dtype on every rank.
        op (numpy.ufunc): ``np.add``, ``np.multiply``, ``np.minimum`` or ``np.maximum``.
        segment_bytes (int, optional): largest message; default ``ring.SEGMENT_BYTES``.
    """
    check_buffer(buf)
    counts = even_counts(buf.size, ch.size)
    reduce_scatter(ch, buf, op, counts, segment_bytes=segment_bytes)
    ring.all_gather(ch, buf, counts, segment_bytes=segment_bytes)


def reduce(
    ch: Channel,
    buf: np.ndarray,
    op: Op,
    root: int,
    *,
    segment_bytes: Optional[int] = None,
) -> None:
    """Reduce ``buf`` over all ranks in rank order into ``buf`` on ``root``.

    On ranks other than ``root``, ``buf`` is used as scratch.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): 1-D contiguous, same size and dtype on every rank.
        op (numpy.ufunc): ``np.add``, ``np.multiply``, ``np.minimum`` or ``np.maximum``.
        root (int): rank that receives the result.
        segment_bytes (int, optional): largest message; default ``ring.SEGMENT_BYTES``.
    """
    check_buffer(buf)
    counts = even_counts(buf.size, ch.size)
    reduce_scatter(ch, buf, op, counts, segment_bytes=segment_bytes)
    star.gather_blocks(ch, buf, counts, root)
