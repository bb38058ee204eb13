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

``all_gather``, ``reduce_scatter``, ``gather``, ``scatter`` and ``all_to_all`` are not
composed: their blocks belong to single ranks, so the flat algorithms serve them.
A host with one rank skips stages 1 and 3.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from . import shm
from ._blocks import check_buffer, check_root
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
