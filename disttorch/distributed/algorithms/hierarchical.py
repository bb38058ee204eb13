"""Hierarchical collectives: shared memory inside each host, sockets between hosts.

When a group spans several hosts, most of its ranks can reach each other through memory
(``shm.py``) and only a few need the network. So a collective runs in three stages, each
through the cheapest path, with one *leader* per host (its first rank; for a rooted
collective the root leads its own host)::

    host A: ranks 0 1 2 3          host B: ranks 4 5 6 7
      1. reduce inside A to 0        1. reduce inside B to 4       (shared memory)
      2. ---------- all-reduce between the leaders 0 and 4 ---------- (ring/tree, sockets)
      3. broadcast inside A from 0   3. broadcast inside B from 4  (shared memory)

The network carries one buffer per host instead of one per rank: for ``h`` hosts of ``m``
ranks, a ring all-reduce over all ``h m`` ranks sends ``2 (h m - 1)`` steps of
``N / (h m)`` bytes, many of them between hosts; here the leaders' ring takes
``2 (h - 1)`` steps of ``N / h`` bytes, and stages 1 and 3 cost about ``3 N / B`` of
memory traffic each (``B`` one core's copy bandwidth).

The algorithm between the leaders (``across``) is chosen by ``select.py`` as for a group
of ``h`` ranks (tree for small buffers, ring for large ones) and runs over a
:class:`~.channel.SubChannel` of the leaders. Every element is reduced once inside its
host, in slot order, then by the leaders' algorithm, which gives every leader the same
bits; stage 3 only copies: every rank of the group holds identical bits.

The block collectives move blocks that belong to single ranks, so the leaders work on the
buffer laid out *in host order* (the blocks of host A's ranks, then host B's, ...): one
block per host between the leaders, whatever the order of the ranks::

    collective      1. inside each host          2. between leaders   3. inside each host
    all_gather      all-gather the host's blocks  all_gather           broadcast the buffer
    reduce_scatter  reduce the buffer to leader   reduce_scatter       broadcast the host's
                                                                        block; keep my own
    all_to_all      all-gather the block sizes,   all_to_all           broadcast what came
                    then every rank's blocks                            in; keep mine

``gather`` and ``scatter`` are ``all_to_all`` in which only the root sends (scatter) or
only the root receives (gather); the other blocks are empty. Stage 1 of ``all_to_all``
shows every rank of a host the blocks of the others (so that blocks between two ranks of
one host never leave it) and the sizes every leader needs to pack and unpack the
messages between hosts: ``m`` ranks per host read ``m`` times the host's blocks, memory
traffic that buys one message per pair of hosts instead of one per pair of ranks.
These collectives only copy, so every rank receives the flat algorithms' bits.

A host with one rank skips stages 1 and 3.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np

from . import shm
from ._blocks import block_offsets, check_buffer, check_root
from .channel import Channel, SubChannel

Op = Callable[..., np.ndarray]


def layout(ch: Channel, root: int | None = None) -> tuple[list[int], list[int]]:
    """This rank's host (its group ranks) and the leaders of all hosts (the root leads its
    host if given, else each host's first rank)."""
    hosts = getattr(ch, "hosts", None)
    if not hosts:
        raise ValueError(
            "the hierarchical algorithms need to know which ranks share a host and memory "
            "(DISTTORCH_SHM=1 everywhere); use 'ring' or 'tree' otherwise"
        )
    leaders = [root if root is not None and root in h else h[0] for h in hosts]
    local = next(h for h in hosts if ch.rank in h)
    return local, leaders


def _rooted_layout(ch: Channel, buf: np.ndarray, root: int) -> tuple[list[int], list[int], int]:
    """For a collective rooted at ``root``, after checking ``buf`` and ``root``: this
    rank's host, the leaders of all hosts, and this host's leader."""
    check_buffer(buf)
    check_root(root, ch.size)
    local, leaders = layout(ch, root)
    return local, leaders, next(r for r in leaders if r in local)


def all_reduce(ch: Channel, buf: np.ndarray, op: Op, *, across: Callable[..., None]) -> None:
    """Reduce ``buf`` over all ranks in place: inside each host, ``across(sub, buf, op)``
    between the hosts' leaders, then back inside each host."""
    check_buffer(buf)
    local, leaders = layout(ch)
    if buf.size == 0:
        return
    if len(local) > 1:
        shm.reduce_to(ch.board, buf, op, 0)
    if ch.rank in leaders and len(leaders) > 1:
        across(SubChannel(ch, leaders), buf, op)
    if len(local) > 1:
        shm.broadcast_from(ch.board, buf, 0)


def reduce(ch: Channel, buf: np.ndarray, op: Op, root: int, *, across: Callable[..., None]) -> None:
    """Reduce ``buf`` over all ranks into ``buf`` on ``root``: inside each host to its
    leader, then ``across(sub, buf, op, root)`` between the leaders."""
    local, leaders, leader = _rooted_layout(ch, buf, root)
    if buf.size == 0:
        return
    if len(local) > 1:
        shm.reduce_to(ch.board, buf, op, local.index(leader), name="reduce")
    if ch.rank == leader and len(leaders) > 1:
        across(SubChannel(ch, leaders), buf, op, leaders.index(root))


def broadcast(ch: Channel, buf: np.ndarray, root: int, *, across: Callable[..., None]) -> None:
    """Copy ``buf`` from ``root``: ``across(sub, buf, root)`` to the other hosts' leaders,
    then inside each host."""
    local, leaders, leader = _rooted_layout(ch, buf, root)
    if buf.size == 0:
        return
    if ch.rank == leader and len(leaders) > 1:
        across(SubChannel(ch, leaders), buf, leaders.index(root))
    if len(local) > 1:
        shm.broadcast_from(ch.board, buf, local.index(leader))


def barrier(ch: Channel, *, across: Callable[..., None]) -> None:
    """Every host's ranks meet, the leaders meet (``across(sub)``), every host's ranks meet."""
    local, leaders = layout(ch)
    if len(local) > 1:
        ch.board.sync()
    if ch.rank in leaders and len(leaders) > 1:
        across(SubChannel(ch, leaders))
    if len(local) > 1:
        ch.board.sync()


def _host(ch: Channel, local: list[int]) -> SubChannel | None:
    """This host's ranks as a group with the host's board (board rank ``i`` is
    ``local[i]``), or ``None`` for a host of one rank."""
    return SubChannel(ch, local, ch.board) if len(local) > 1 else None


class _HostOrder:
    """A buffer of ``ch.size`` blocks (``counts``) laid out in host order: the blocks of the
    first host's ranks, then the second host's, ... ``blocks[r]`` is rank ``r``'s range
    there, ``hosts[h]`` host ``h``'s (its ranks' blocks are adjacent)."""

    def __init__(self, ch: Channel, counts: Sequence[int]) -> None:
        self.host_counts = [sum(counts[r] for r in h) for h in ch.hosts]
        self.blocks: dict[int, slice] = {}
        start = 0
        for h in ch.hosts:
            for r in h:
                self.blocks[r] = slice(start, start + counts[r])
                start += counts[r]
        self.hosts = [slice(self.blocks[h[0]].start, self.blocks[h[-1]].stop) for h in ch.hosts]

    def pack(self, buf: np.ndarray, offsets: Sequence[int]) -> np.ndarray:
        """A copy of ``buf`` (blocks at ``offsets``) in host order."""
        packed = np.empty_like(buf)
        for r, at in self.blocks.items():
            packed[at] = buf[offsets[r] : offsets[r + 1]]
        return packed

    def unpack(self, packed: np.ndarray, buf: np.ndarray, offsets: Sequence[int], ranks) -> None:
        """Copy the blocks of ``ranks`` from ``packed`` back into ``buf``."""
        for r in ranks:
            buf[offsets[r] : offsets[r + 1]] = packed[self.blocks[r]]


def all_gather(ch: Channel, buf: np.ndarray, counts: Sequence[int], *, across: Callable[..., None]) -> None:
    """Fill every block of ``buf`` (laid out by ``counts``) from the rank that owns it:
    inside each host, ``across(sub, packed, host_counts)`` between the leaders on the
    buffer in host order, then the whole buffer inside each host."""
    check_buffer(buf)
    local, leaders = layout(ch)
    offsets = block_offsets(counts, buf.size, ch.size)
    if buf.size == 0:
        return
    order, host = _HostOrder(ch, counts), _host(ch, local)
    packed = order.pack(buf, offsets)
    if host is not None:
        shm.all_gather(host, packed[order.hosts[ch.hosts.index(local)]], [counts[r] for r in local])
    if ch.rank in leaders and len(leaders) > 1:
        across(SubChannel(ch, leaders), packed, order.host_counts)
    if host is not None:
        shm.broadcast(host, packed, 0)
    order.unpack(packed, buf, offsets, range(ch.size))


def reduce_scatter(
    ch: Channel, buf: np.ndarray, op: Op, counts: Sequence[int], *, across: Callable[..., None]
) -> None:
    """Reduce ``buf`` (blocks laid out by ``counts``) so that block ``ch.rank`` holds the
    reduction over all ranks: the buffer in host order is reduced inside each host to its
    leader, ``across(sub, packed, op, host_counts)`` leaves each leader its host's blocks,
    which it shares inside the host. Other blocks of ``buf`` are left as they were."""
    check_buffer(buf)
    local, leaders = layout(ch)
    offsets = block_offsets(counts, buf.size, ch.size)
    if buf.size == 0:
        return
    order, host = _HostOrder(ch, counts), _host(ch, local)
    packed = order.pack(buf, offsets)
    if host is not None:
        shm.reduce_to(ch.board, packed, op, 0, name="reduce_scatter")
    if ch.rank in leaders and len(leaders) > 1:
        across(SubChannel(ch, leaders), packed, op, order.host_counts)
    if host is not None:
        shm.broadcast(host, packed[order.hosts[ch.hosts.index(local)]], 0)
    order.unpack(packed, buf, offsets, [ch.rank])


def _bytes(block: np.ndarray, what: str) -> np.ndarray:
    """A contiguous block as its bytes (a view)."""
    if not block.flags.c_contiguous:
        raise ValueError(f"{what} must be contiguous, got strides {block.strides}")
    return block.reshape(-1).view(np.uint8)


def all_to_all(
    ch: Channel,
    send_blocks: Sequence[np.ndarray],
    recv_blocks: Sequence[np.ndarray],
    *,
    across: Callable[..., None],
) -> None:
    """Send ``send_blocks[i]`` to rank ``i`` and receive rank ``i``'s block into
    ``recv_blocks[i]`` (sizes may differ between pairs): inside each host every rank sees
    every local rank's blocks, the leaders exchange one message per pair of hosts
    (``across(sub, sends, recvs)``), and share what came in inside their host."""
    n, hosts = ch.size, ch.hosts
    if len(send_blocks) != n or len(recv_blocks) != n:
        raise ValueError(
            f"all_to_all needs one send and one receive block per rank ({n}), got "
            f"{len(send_blocks)} send and {len(recv_blocks)} receive blocks"
        )
    local, leaders = layout(ch)
    sends = [_bytes(b, f"send block {i}") for i, b in enumerate(send_blocks)]
    recvs = [_bytes(b, f"receive block {i}") for i, b in enumerate(recv_blocks)]
    host, m, me = _host(ch, local), len(local), local.index(ch.rank)

    # 1. Every rank of the host learns the sizes of every local rank's blocks, both ways:
    #    sent[i, d] bytes go from local[i] to rank d, wanted[i, s] come to local[i] from s.
    table = np.zeros((m, 2, n), np.int64)
    table[me] = [[b.size for b in sends], [b.size for b in recvs]]
    if host is not None:
        shm.all_gather(host, table.reshape(-1), [2 * n] * m)
    sent, wanted = table[:, 0], table[:, 1]
    # Every rank of the host checks every local pair alike, before anything moves, so that
    # all of them report the same first mismatch.
    for i, src in enumerate(local):
        for j, dst in enumerate(local):
            if wanted[j, src] != sent[i, dst]:
                raise ValueError(
                    f"rank {src} sends {sent[i, dst]} bytes to rank {dst}, whose receive "
                    f"block {src} holds {wanted[j, src]} bytes"
                )
    # ... and every local rank's blocks, one rank after another, in rank order.
    starts = np.concatenate([[0], np.cumsum(sent.reshape(-1))])
    outgoing = np.empty(int(starts[-1]), np.uint8)
    for d in range(n):
        outgoing[starts[me * n + d] : starts[me * n + d + 1]] = sends[d]
    if host is not None:
        shm.all_gather(host, outgoing, sent.sum(axis=1).tolist())

    def block(i: int, d: int) -> np.ndarray:
        return outgoing[starts[i * n + d] : starts[i * n + d + 1]]

    for i, src in enumerate(local):
        recvs[src][...] = block(i, ch.rank)

    # 2. Between the leaders: host A's message to host B holds, for each rank a of A and
    #    then each rank b of B, the block a -> b; what comes in lies in ``incoming``.
    remote = [h for h in hosts if ch.rank not in h]
    arriving = [int(sum(wanted[j, s] for s in h for j in range(m))) for h in remote]
    incoming = np.empty(sum(arriving), np.uint8)
    if ch.rank in leaders and len(leaders) > 1:
        nothing = incoming[:0]
        out_msgs, in_msgs, at = [], [], 0
        for h in hosts:
            if ch.rank in h:
                out_msgs.append(nothing)
                in_msgs.append(nothing)
                continue
            out_msgs.append(np.concatenate([block(i, d) for i in range(m) for d in h]))
            size = arriving[remote.index(h)]
            in_msgs.append(incoming[at : at + size])
            at += size
        across(SubChannel(ch, leaders), out_msgs, in_msgs)

    # 3. The leader shares what came in; every rank keeps the blocks addressed to it.
    if host is not None:
        shm.broadcast(host, incoming, 0)
    at = 0
    for h in remote:
        for s in h:
            for j in range(m):
                size = int(wanted[j, s])
                if j == me:
                    recvs[s][...] = incoming[at : at + size]
                at += size


def gather(
    ch: Channel,
    send: np.ndarray,
    recv: Optional[Sequence[np.ndarray]],
    root: int,
    *,
    across: Callable[..., None],
) -> None:
    """Collect every rank's ``send`` into ``recv[rank]`` on ``root``: an
    :func:`all_to_all` in which every rank sends only to ``root`` (``across`` is the
    leaders' all-to-all)."""
    check_root(root, ch.size)
    n, nothing = ch.size, send.reshape(-1)[:0]
    sends = [send if r == root else nothing for r in range(n)]
    if ch.rank == root and (recv is None or len(recv) != n):
        raise ValueError(f"recv must hold one array per rank ({n}) on the root")
    all_to_all(ch, sends, recv if ch.rank == root else [nothing] * n, across=across)


def scatter(
    ch: Channel,
    send: Optional[Sequence[np.ndarray]],
    recv: np.ndarray,
    root: int,
    *,
    across: Callable[..., None],
) -> None:
    """Send ``send[i]`` from ``root`` into ``recv`` on rank ``i``: an :func:`all_to_all`
    in which only ``root`` sends (``across`` is the leaders' all-to-all)."""
    check_root(root, ch.size)
    n, nothing = ch.size, recv.reshape(-1)[:0]
    if ch.rank == root and (send is None or len(send) != n):
        raise ValueError(f"send must hold one array per rank ({n}) on the root")
    recvs = [recv if r == root else nothing for r in range(n)]
    all_to_all(ch, send if ch.rank == root else [nothing] * n, recvs, across=across)
