"""Pairwise exchange: all-to-all, where every rank has a different block for every other.

Rank ``r`` holds ``send_blocks[i]`` for each rank ``i`` and wants ``recv_blocks[i]`` from
each. In step ``k = 1 .. n - 1`` rank ``r`` sends to ``(r + k) % n`` and receives from
``(r - k) % n`` in one ``sendrecv``: every step is a permutation, each rank sends exactly
one block and receives exactly one, so no link is oversubscribed. With 4 ranks
(``a -> b`` = the block rank ``a`` addresses to ``b``)::

    step  rank 0        rank 1        rank 2        rank 3
    1     0->1, 3->0    1->2, 0->1    2->3, 1->2    3->0, 2->3
    2     0->2, 2->0    1->3, 3->1    2->0, 0->2    3->1, 1->3
    3     0->3, 1->0    1->0, 2->1    2->1, 3->2    3->2, 0->3

The block for itself is copied locally. Cost: ``n - 1`` steps; each rank sends every
block but its own, ``(n - 1) / n * N`` bytes when the ``N`` bytes are split evenly.
Blocks may have different sizes (and be empty); what rank ``r`` sends to ``i`` must have
the size of ``recv_blocks[r]`` on rank ``i``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .channel import Channel


def all_to_all(ch: Channel, send_blocks: Sequence[np.ndarray], recv_blocks: Sequence[np.ndarray]) -> None:
    """Send ``send_blocks[i]`` to rank ``i`` and receive rank ``i``'s block into ``recv_blocks[i]``.

    Args:
        ch (Channel): the group's channel.
        send_blocks (sequence of numpy.ndarray): one contiguous array per rank.
        recv_blocks (sequence of numpy.ndarray): one contiguous array per rank, filled on
            return.
    """
    n, rank = ch.size, ch.rank
    if len(send_blocks) != n or len(recv_blocks) != n:
        raise ValueError(
            f"all_to_all needs one send and one receive block per rank ({n}), got "
            f"{len(send_blocks)} send and {len(recv_blocks)} receive blocks"
        )
    np.copyto(recv_blocks[rank], send_blocks[rank])
    for step in range(1, n):
        to, frm = (rank + step) % n, (rank - step) % n
        ch.sendrecv(to, send_blocks[to], frm, recv_blocks[frm])
