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
recursive doubling; then each odd rank sends the result back. :func:`describe_all_reduce`
prints the schedule; with 5 ranks::

    tree all_reduce on 5 ranks: 2 exchange steps among 4; rank 0 sits out
    fold in   0 -> 1
    step 0    1 <-> 2   3 <-> 4
    step 1    1 <-> 3   2 <-> 4
    fold out  1 -> 0

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

All-gather: recursive doubling too, but each step swaps only the blocks gathered so far:
in step ``k`` a rank holds the blocks of ``2**k`` consecutive ranks (one contiguous slice)
and receives the adjacent ``2**k``. ``log2(p)`` steps (+2 if ``n`` is not a power of two),
``(p - 1) / p * N`` bytes sent per participant.

``reduce_scatter`` for small buffers is the all-reduce: one recursive doubling leaves
every block reduced everywhere, in ``log2(n)`` steps instead of ``n - 1``.
"""

from __future__ import annotations

import logging
from typing import Callable, Optional, Sequence

import numpy as np

from ._blocks import block_offsets, check_buffer, check_root
from .channel import Channel

logger = logging.getLogger("disttorch.distributed.algorithms")

Op = Callable[..., np.ndarray]


def _layout(size: int) -> tuple[int, int]:
    """``(p, extra)``: the largest power of two ``p <= size`` and ``extra = size - p``."""
    p = 1 << (size.bit_length() - 1)
    return p, size - p


def _virtual(rank: int, extra: int) -> Optional[int]:
    """Virtual rank of a participant in recursive doubling; ``None`` for a rank that sits out.

    Participants get consecutive virtual ranks: ``2 i + 1 -> i`` for the folded pairs
    (``i < extra``), ``r -> r - extra`` for the rest. The mapping keeps the order of ranks.
    """
    if rank < 2 * extra:
        return None if rank % 2 == 0 else rank // 2
    return rank - extra


def _first_rank(virtual: int, extra: int) -> int:
    """Lowest real rank whose data virtual rank ``virtual`` stands for (2 ranks if folded)."""
    return 2 * virtual if virtual < extra else virtual + extra


def doubling_partner(rank: int, step: int, size: int) -> Optional[int]:
    """Rank that ``rank`` exchanges with in recursive-doubling ``step`` (``None``: it sits out).

    Partners differ in bit ``step`` of their virtual rank. As the virtual ranks keep the
    order of the real ones, the lower rank of a pair also holds the lower ranks' data.
    """
    extra = _layout(size)[1]
    virtual = _virtual(rank, extra)
    if virtual is None:
        return None
    other = virtual ^ (1 << step)
    return 2 * other + 1 if other < extra else other + extra


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
    p, extra = _layout(n)
    folded = rank < 2 * extra  # one of a pair that fold into one participant
    scratch = np.empty_like(buf)
    debug = logger.isEnabledFor(logging.DEBUG)

    if folded and rank % 2 == 0:  # sit out: hand my data over, get the result back
        ch.send(rank + 1, buf)
        ch.recv(rank + 1, buf)
        if debug:
            logger.debug("tree all_reduce rank %d: folded into rank %d", rank, rank + 1)
        return
    if folded:  # take in my even neighbour's data, as the left operand
        ch.recv(rank - 1, scratch)
        op(scratch, buf, out=buf)

    for step in range(p.bit_length() - 1):
        partner = doubling_partner(rank, step, n)
        ch.sendrecv(partner, buf, partner, scratch)
        if rank < partner:  # the lower ranks' partial result goes on the left
            op(buf, scratch, out=buf)
        else:
            op(scratch, buf, out=buf)
        if debug:
            logger.debug("tree all_reduce rank %d step %d: exchanged with rank %d", rank, step, partner)

    if folded:  # hand the result back to the rank that sat out
        ch.send(rank - 1, buf)


def describe_all_reduce(size: int) -> str:
    """Return the recursive-doubling schedule for ``size`` ranks as text.

    Example::

        >>> print(describe_all_reduce(5))
        tree all_reduce on 5 ranks: 2 exchange steps among 4; rank 0 sits out
        fold in   0 -> 1
        step 0    1 <-> 2   3 <-> 4
        step 1    1 <-> 3   2 <-> 4
        fold out  1 -> 0
    """
    if size < 1:
        raise ValueError(f"size must be at least 1, got {size}")
    p, extra = _layout(size)
    steps = p.bit_length() - 1
    header = f"tree all_reduce on {size} ranks: {steps} exchange step{'s' * (steps != 1)}"
    if extra:
        idle = ", ".join(str(2 * i) for i in range(extra))
        header += f" among {p}; rank{'s' * (extra > 1)} {idle} sit{'s' * (extra == 1)} out"
    lines = [header]
    folds = [(2 * i, 2 * i + 1) for i in range(extra)]
    if folds:
        lines.append("fold in   " + "   ".join(f"{a} -> {b}" for a, b in folds))
    for step in range(steps):
        pairs = []
        for rank in range(size):
            partner = doubling_partner(rank, step, size)
            if partner is not None and rank < partner:
                pairs.append(f"{rank} <-> {partner}")
        lines.append(f"{f'step {step}':<10}" + "   ".join(pairs))
    if folds:
        lines.append("fold out  " + "   ".join(f"{b} -> {a}" for a, b in folds))
    return "\n".join(lines)


def all_gather(ch: Channel, buf: np.ndarray, counts: Sequence[int]) -> None:
    """Fill every block of ``buf`` by recursive doubling.

    In step ``k`` each participant holds the blocks of ``2**k`` consecutive (virtual) ranks,
    one contiguous slice of ``buf``, and swaps it with its partner for the adjacent slice.
    Ranks that sit out hand their block in first and receive the whole buffer last.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): 1-D contiguous; ``ch.size`` blocks of ``counts[i]`` elements.
            Block ``ch.rank`` is filled on entry; all blocks are filled on return.
        counts (sequence of int): elements per block; may be unequal or zero.
    """
    check_buffer(buf)
    n, rank = ch.size, ch.rank
    offsets = block_offsets(counts, buf.size, n)
    if n == 1 or buf.size == 0:
        return
    p, extra = _layout(n)
    virtual = _virtual(rank, extra)
    folded = rank < 2 * extra
    debug = logger.isEnabledFor(logging.DEBUG)

    def blocks_of(first: int, count: int) -> np.ndarray:
        """The slice of ``buf`` holding the blocks of virtual ranks ``first .. first+count-1``."""
        return buf[offsets[_first_rank(first, extra)] : offsets[_first_rank(first + count, extra)]]

    if virtual is None:  # sit out: hand my block in, get the whole buffer back
        ch.send(rank + 1, buf[offsets[rank] : offsets[rank + 1]])
        ch.recv(rank + 1, buf)
        return
    if folded:
        ch.recv(rank - 1, buf[offsets[rank - 1] : offsets[rank]])

    for step in range(p.bit_length() - 1):
        width = 1 << step
        mine = virtual & ~(width - 1)  # first virtual rank of the range I hold
        partner = doubling_partner(rank, step, n)
        ch.sendrecv(partner, blocks_of(mine, width), partner, blocks_of(mine ^ width, width))
        if debug:
            logger.debug(
                "tree all_gather rank %d step %d: exchanged blocks with rank %d", rank, step, partner
            )

    if folded:
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
    check_root(root, ch.size)
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
    check_root(root, ch.size)
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


def barrier(ch: Channel) -> None:
    """Return once every rank has called it: an all-reduce of one byte (recursive doubling)."""
    all_reduce(ch, np.zeros(1, np.uint8), np.maximum)
