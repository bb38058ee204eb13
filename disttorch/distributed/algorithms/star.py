"""Star algorithms: everything goes through one root. The teaching baseline.

The simplest way to combine data: every rank sends its buffer to a root, the root
reduces what it received, and sends the result back to everyone. With 4 ranks and root 0::

    gather + reduce             broadcast
    rank 1 --x1--> rank 0       rank 0 --r--> rank 1
    rank 2 --x2--> rank 0       rank 0 --r--> rank 2
    rank 3 --x3--> rank 0       rank 0 --r--> rank 3
    rank 0: r = ((x0 op x1) op x2) op x3

All-reduce on ``n`` ranks of ``N`` bytes: ``2 (n - 1)`` messages, all through the root,
one after another. The root receives ``(n - 1) N`` bytes and sends ``(n - 1) N`` bytes,
the others send and receive ``N``. The root's link is the bottleneck, so the time grows
with ``n`` where the ring's (``ring.py``) stays near ``2 N``.

What the star does well is order: the root folds the contributions in rank order
``0, 1, ..., n - 1``, one after another, exactly like a sequential loop would. Every other
rank receives a copy of the root's bytes, so all ranks hold identical bits, and the
result equals ``deterministic.py``'s.

Also here, each a loop over the ranks at the root:

* :func:`broadcast` - the root sends ``buf`` to each rank (``(n - 1) N`` bytes from the root).
* :func:`reduce` - the rank-order fold at the root.
* :func:`gather` / :func:`scatter` - one buffer per rank, to / from the root.
* :func:`all_gather`, :func:`reduce_scatter` - through rank 0.
* :func:`gather_blocks` / :func:`scatter_blocks` - the blocks of one flat buffer to / from
  the root; ``ring.py`` and ``deterministic.py`` build on them.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np

from ._blocks import block_offsets, check_buffer, check_root
from .channel import Channel

Op = Callable[..., np.ndarray]


def _check_list(arrays: Optional[Sequence[np.ndarray]], name: str, size: int) -> None:
    if arrays is None or len(arrays) != size:
        got = "None" if arrays is None else f"{len(arrays)} arrays"
        raise ValueError(f"{name} must hold one array per rank ({size}), got {got}")


def broadcast(ch: Channel, buf: np.ndarray, root: int) -> None:
    """Copy ``buf`` from ``root`` to every rank by sending it to each in turn.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): contiguous; the data on ``root``, overwritten elsewhere.
        root (int): rank that holds the data.
    """
    check_root(root, ch.size)
    if ch.rank == root:
        for peer in range(ch.size):
            if peer != root:
                ch.send(peer, buf)
    else:
        ch.recv(root, buf)


def reduce(ch: Channel, buf: np.ndarray, op: Op, root: int) -> None:
    """Reduce ``buf`` over all ranks into ``buf`` on ``root``, folding in rank order.

    The root computes ``((x0 op x1) op x2) ... op x(n-1)``, receiving one rank's buffer
    at a time into a single scratch buffer. Other ranks only send; their ``buf`` is
    unchanged.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): contiguous, same size and dtype on every rank.
        op (numpy.ufunc): ``np.add``, ``np.multiply``, ``np.minimum`` or ``np.maximum``.
        root (int): rank that receives the result.
    """
    check_root(root, ch.size)
    if ch.size == 1:
        return
    if ch.rank != root:
        ch.send(root, buf)
        return
    acc = buf
    if root != 0:  # the fold starts with rank 0's data: set our own aside
        mine = buf.copy()
        ch.recv(0, acc)
    scratch = np.empty_like(buf)
    for peer in range(1, ch.size):
        if peer == root:
            incoming = mine
        else:
            ch.recv(peer, scratch)
            incoming = scratch
        op(acc, incoming, out=acc)


def all_reduce(ch: Channel, buf: np.ndarray, op: Op) -> None:
    """Reduce ``buf`` over all ranks at rank 0 (in rank order), then broadcast the result.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): contiguous, same size and dtype on every rank.
        op (numpy.ufunc): ``np.add``, ``np.multiply``, ``np.minimum`` or ``np.maximum``.
    """
    reduce(ch, buf, op, 0)
    broadcast(ch, buf, 0)


def gather_blocks(ch: Channel, buf: np.ndarray, counts: Sequence[int], root: int) -> None:
    """Send block ``ch.rank`` of ``buf`` to ``root``, which places each in its own ``buf``.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): 1-D contiguous; ``ch.size`` blocks of ``counts[i]`` elements.
        counts (sequence of int): elements per block.
        root (int): rank that collects all blocks.
    """
    check_buffer(buf)
    check_root(root, ch.size)
    offsets = block_offsets(counts, buf.size, ch.size)
    if ch.rank != root:
        ch.send(root, buf[offsets[ch.rank] : offsets[ch.rank + 1]])
        return
    for peer in range(ch.size):
        if peer != root:
            ch.recv(peer, buf[offsets[peer] : offsets[peer + 1]])


def scatter_blocks(ch: Channel, buf: np.ndarray, counts: Sequence[int], root: int) -> None:
    """Send block ``i`` of ``root``'s ``buf`` to rank ``i``, into block ``i`` of its ``buf``.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): 1-D contiguous; ``ch.size`` blocks of ``counts[i]`` elements.
        counts (sequence of int): elements per block.
        root (int): rank that holds all blocks.
    """
    check_buffer(buf)
    check_root(root, ch.size)
    offsets = block_offsets(counts, buf.size, ch.size)
    if ch.rank != root:
        ch.recv(root, buf[offsets[ch.rank] : offsets[ch.rank + 1]])
        return
    for peer in range(ch.size):
        if peer != root:
            ch.send(peer, buf[offsets[peer] : offsets[peer + 1]])


def all_gather(ch: Channel, buf: np.ndarray, counts: Sequence[int]) -> None:
    """Gather every rank's block at rank 0, then broadcast the whole buffer.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): 1-D contiguous; block ``ch.rank`` filled on entry, all on return.
        counts (sequence of int): elements per block.
    """
    gather_blocks(ch, buf, counts, 0)
    broadcast(ch, buf, 0)


def reduce_scatter(ch: Channel, buf: np.ndarray, op: Op, counts: Sequence[int]) -> None:
    """Reduce the whole buffer at rank 0 (in rank order), then scatter its blocks.

    Args:
        ch (Channel): the group's channel.
        buf (numpy.ndarray): 1-D contiguous; on return block ``ch.rank`` holds the result.
        op (numpy.ufunc): ``np.add``, ``np.multiply``, ``np.minimum`` or ``np.maximum``.
        counts (sequence of int): elements per block.
    """
    check_buffer(buf)
    block_offsets(counts, buf.size, ch.size)
    reduce(ch, buf, op, 0)
    scatter_blocks(ch, buf, counts, 0)


def gather(
    ch: Channel,
    send: np.ndarray,
    recv: Optional[Sequence[np.ndarray]],
    root: int,
) -> None:
    """Collect ``send`` from every rank into ``recv[rank]`` on ``root``.

    Args:
        ch (Channel): the group's channel.
        send (numpy.ndarray): contiguous; this rank's contribution.
        recv (sequence of numpy.ndarray, optional): on ``root``, one contiguous array per
            rank, each the size of that rank's ``send``; ignored elsewhere.
        root (int): rank that collects.
    """
    check_root(root, ch.size)
    if ch.rank != root:
        ch.send(root, send)
        return
    _check_list(recv, "recv", ch.size)
    for peer in range(ch.size):
        if peer == root:
            np.copyto(recv[peer], send)
        else:
            ch.recv(peer, recv[peer])


def scatter(
    ch: Channel,
    send: Optional[Sequence[np.ndarray]],
    recv: np.ndarray,
    root: int,
) -> None:
    """Send ``send[i]`` from ``root`` to rank ``i``, into its ``recv``.

    Args:
        ch (Channel): the group's channel.
        send (sequence of numpy.ndarray, optional): on ``root``, one contiguous array per
            rank; ignored elsewhere.
        recv (numpy.ndarray): contiguous; receives this rank's array.
        root (int): rank that holds the data.
    """
    check_root(root, ch.size)
    if ch.rank != root:
        ch.recv(root, recv)
        return
    _check_list(send, "send", ch.size)
    for peer in range(ch.size):
        if peer == root:
            np.copyto(recv, send[peer])
        else:
            ch.send(peer, send[peer])
