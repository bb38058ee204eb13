"""Latency-optimal algorithms for small buffers: recursive doubling and binomial trees.

For a few kilobytes the cost of a collective is the number of message latencies in a row,
not the bytes. These algorithms need about ``log2(n)`` steps where the ring needs
``2 (n - 1)``.

All-reduce: recursive doubling
------------------------------
In step ``k`` every rank exchanges its whole buffer with the rank whose number differs in
bit ``k`` and combines the two. After ``log2(n)`` steps every rank has combined all
``n`` contributions. With 4 ranks::

    step  pairs        each rank now holds
    0     0-1, 2-3     x0+x1 (ranks 0, 1)      x2+x3 (ranks 2, 3)
    1     0-2, 1-3     (x0+x1)+(x2+x3) (all ranks)

Bitwise identical results: in every pair, both ranks compute ``op(lower, upper)``, the
partial result of the lower-numbered half on the left, from the same two operands. So
both hold the same bits even where ``op`` is not bit-commutative (``minimum(0., -0.)``,
NaN payloads), and by induction all ranks end with the same expression tree.

Not a power of two: with ``n = p + e`` (``p`` the largest power of two ``<= n``) the first
``2 e`` ranks pair up before and after. Each even rank ``2 i`` sends its buffer to ``2 i + 1``
(which folds it in as the left operand) and sits out; the ``p`` remaining ranks run
recursive doubling; then each odd rank sends the result back. With 5 ranks: rank 0 folds
into rank 1, ranks 1, 2, 3, 4 run the 4-rank exchange, rank 1 sends the result to rank 0.

Cost: ``log2(p)`` steps (+2 if ``n`` is not a power of two), each moving the whole buffer:
``log2(p) * N`` bytes sent per rank. Each rank also reduces ``N`` elements per step, so
for large buffers the ring (``2 (n-1)/n * N`` bytes, ``(n-1)/n * N`` reductions) wins.

Broadcast and reduce: binomial tree
-----------------------------------
Number the ranks relative to the root (``rel = (rank - root) % n``). In a broadcast the
ranks that have the data double each step: the root first sends to the rank half way
round, then each holder sends a quarter of the way, and so on. A reduce runs the same tree
upwards, each partial result covering a contiguous range of relative ranks. With 4 ranks
and root 0::

    broadcast            reduce
    step 0: 0 -> 2       step 0: 1 -> 0, 3 -> 2   (receiver computes own op sender's)
    step 1: 0 -> 1,      step 1: 2 -> 0
            2 -> 3

Cost: ``ceil(log2(n))`` steps; the root sends (or receives) ``ceil(log2(n)) * N`` bytes.

``reduce_scatter`` for small buffers is the all-reduce: one recursive doubling leaves
every block reduced everywhere, in ``log2(n)`` steps instead of ``n - 1``.
"""

from __future__ import annotations

import logging
from typing import Callable, Sequence

import numpy as np

from ._blocks import block_offsets, check_buffer
from .channel import Channel

logger = logging.getLogger("disttorch.distributed.algorithms")

Op = Callable[..., np.ndarray]


def _check_root(ch: Channel, root: int) -> None:
    if not 0 <= root < ch.size:
        raise ValueError(f"root must be a rank in [0, {ch.size}), got {root}")


def all_reduce(ch: Channel, buf: np.ndarray, op: Op) -> None:
    """Reduce ``buf`` over all ranks in place by recursive doubling.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): 1-D contiguous, same size and dtype on every rank.
        op (numpy.ufunc): ``np.add``, ``np.multiply``, ``np.minimum`` or ``np.maximum``.
    """
    check_buffer(buf)
    n, rank = ch.size, ch.rank
    if n == 1 or buf.size == 0:
        return
    p = 1 << (n.bit_length() - 1)  # largest power of two <= n
    extra = n - p
    scratch = np.empty_like(buf)
    debug = logger.isEnabledFor(logging.DEBUG)

    # Fold in: ranks 2i and 2i+1 (i < extra) become one participant, 2i+1.
    if rank < 2 * extra:
        if rank % 2 == 0:
            ch.send(rank + 1, buf)
            ch.recv(rank + 1, buf)  # the final result, after the others are done
            if debug:
                logger.debug("tree all_reduce rank %d: folded into rank %d", rank, rank + 1)
            return
        ch.recv(rank - 1, scratch)
        op(scratch, buf, out=buf)  # the lower rank's data on the left
        virtual = rank // 2
    else:
        virtual = rank - extra

    mask = 1
    while mask < p:
        partner_virtual = virtual ^ mask
        partner = (
            2 * partner_virtual + 1 if partner_virtual < extra else partner_virtual + extra
        )
        ch.sendrecv(partner, buf, partner, scratch)
        if virtual < partner_virtual:
            op(buf, scratch, out=buf)
        else:
            op(scratch, buf, out=buf)
        if debug:
            logger.debug(
                "tree all_reduce rank %d step %d: exchanged with rank %d",
                rank, mask.bit_length() - 1, partner,
            )
        mask <<= 1

    # Fold out: hand the result back to the rank that sat out.
    if rank < 2 * extra:
        ch.send(rank - 1, buf)


def reduce_scatter(ch: Channel, buf: np.ndarray, op: Op, counts: Sequence[int]) -> None:
    """Reduce the whole ``buf`` everywhere (recursive doubling); block ``ch.rank`` is then
    the result and so is every other block.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): 1-D contiguous; blocks laid out by ``counts``.
        op (numpy.ufunc): ``np.add``, ``np.multiply``, ``np.minimum`` or ``np.maximum``.
        counts (sequence of int): elements per block.
    """
    check_buffer(buf)
    block_offsets(counts, buf.size, ch.size)
    all_reduce(ch, buf, op)


def broadcast(ch: Channel, buf: np.ndarray, root: int) -> None:
    """Copy ``buf`` from ``root`` to every rank along a binomial tree.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): contiguous; the data on ``root``, overwritten elsewhere.
        root (int): rank that holds the data.
    """
    _check_root(ch, root)
    n = ch.size
    rel = (ch.rank - root) % n
    mask = 1
    while mask < n:  # receive from the parent: clear my lowest set bit
        if rel & mask:
            ch.recv((rel - mask + root) % n, buf)
            break
        mask <<= 1
    mask >>= 1
    while mask > 0:  # send to my children, farthest first
        if rel + mask < n:
            ch.send((rel + mask + root) % n, buf)
        mask >>= 1


def reduce(ch: Channel, buf: np.ndarray, op: Op, root: int) -> None:
    """Reduce ``buf`` over all ranks into ``buf`` on ``root`` along a binomial tree.

    On ranks other than ``root``, ``buf`` is used as scratch.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): contiguous, same size and dtype on every rank.
        op (numpy.ufunc): ``np.add``, ``np.multiply``, ``np.minimum`` or ``np.maximum``.
        root (int): rank that receives the result.
    """
    _check_root(ch, root)
    n = ch.size
    if n == 1:
        return
    rel = (ch.rank - root) % n
    scratch = np.empty_like(buf)
    mask = 1
    while mask < n:
        if rel & mask:  # hand my partial result (ranks rel .. rel+mask-1) to my parent
            ch.send((rel - mask + root) % n, buf)
            return
        if rel + mask < n:  # the child covers the ranks right after mine: it goes right
            ch.recv((rel + mask + root) % n, scratch)
            op(buf, scratch, out=buf)
        mask <<= 1
