"""The ``Channel``: the only thing the collective algorithms know about communication.

An algorithm is a plain function ``f(ch, buf, ...)`` that moves NumPy arrays between the
ranks of a group by calling three methods of ``ch``:

===============================================  ========================================
``ch.send(peer, buf)``                           send contiguous ``buf`` to rank ``peer``
``ch.recv(peer, out)``                           receive the next message from ``peer``
                                                 into contiguous ``out`` (byte sizes match)
``ch.sendrecv(send_peer, buf, recv_peer, out)``  both at once; never deadlocks when every
                                                 rank calls it at the same time (a ring
                                                 step)
===============================================  ========================================

The process group implements :class:`Channel` over ZeroMQ: it builds one channel per
collective call, stamps every message with the collective's sequence number, op, dtype and
shape, and checks them on arrival. The algorithms never see any of that.

This module also holds :class:`ThreadChannel`, an in-memory implementation in which the
ranks are threads of one process and messages are copied through queues. Tests and the
teaching example use it; :func:`run_threads` starts one thread per rank and collects what
each returns::

    >>> import numpy as np
    >>> from disttorch.distributed.algorithms import ring
    >>> def work(ch):
    ...     buf = np.full(6, float(ch.rank + 1))
    ...     ring.all_reduce(ch, buf, np.add)
    ...     return buf
    >>> run_threads(3, work)[0]
    array([6., 6., 6., 6., 6., 6.])
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

from ..wire import shm

#: Seconds :meth:`ThreadChannel.recv` waits for a message before raising ``TimeoutError``.
DEFAULT_TIMEOUT = 10.0


@runtime_checkable
class Channel(Protocol):
    """Point-to-point messaging between the ranks of one group, for one collective call.

    Attributes:
        rank (int): this process's index in the group, ``0 .. size - 1``.
        size (int): number of ranks in the group.

    A channel may also offer (``None`` when it cannot):

    * ``board``: the shared-memory board of this rank's host for this collective
      (``slots()``, ``sync()``, see ``wire/shm.py``), used by ``shm.py``;
    * ``hosts``: the ranks of every host (lists of group ranks), used by
      ``hierarchical.py`` and the automatic choice.
    """

    rank: int
    size: int

    def send(self, peer: int, buf: np.ndarray) -> None:
        """Send contiguous ``buf`` to group rank ``peer``. Returns when ``buf`` may be reused."""

    def recv(self, peer: int, out: np.ndarray) -> None:
        """Receive the next message from ``peer`` into contiguous ``out``.

        Byte sizes must match (a mismatch raises). Messages between one ordered pair of
        ranks arrive in the order they were sent.
        """

    def sendrecv(self, send_peer: int, send_buf: np.ndarray, recv_peer: int, recv_out: np.ndarray) -> None:
        """Send ``send_buf`` to ``send_peer`` and receive from ``recv_peer`` into ``recv_out``.

        Never deadlocks when every rank calls it at the same time. Returns when
        ``send_buf`` may be reused and ``recv_out`` is filled.
        """


class _Abort:
    """Queue item that wakes a waiting receiver after another rank failed."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


class ThreadWorld:
    """A group of ``size`` ranks living as threads of this process.

    Holds one FIFO queue per ordered pair of ranks. :meth:`channel` hands out the
    :class:`ThreadChannel` of one rank.

    Args:
        size (int): number of ranks.
        timeout (float): seconds a ``recv`` (or a board sync) waits before raising ``TimeoutError``.
        hosts (list of lists of int, optional): ranks grouped as if on hosts; the ranks of
            each host then share a board (``wire/shm.py``) over an array of this process.
        slot_bytes (int): bytes of one half of a board slot.
        arena (int): bytes of each rank's arena on its board.
    """

    def __init__(
        self,
        size: int,
        timeout: float = DEFAULT_TIMEOUT,
        hosts: list[list[int]] | None = None,
        slot_bytes: int = shm.SLOT_BYTES,
        arena: int = 0,
    ) -> None:
        if size < 1:
            raise ValueError(f"world size must be at least 1, got {size}")
        self.size = size
        self.timeout = timeout
        self.hosts = hosts
        self.aborted: str | None = None
        self._queues = {(src, dst): queue.Queue() for src in range(size) for dst in range(size)}
        self.boards: dict[int, shm.Board] = {}  # rank -> its board, for ranks on hosts
        for host in hosts or []:
            memory = np.zeros(shm.segment_bytes(len(host), slot_bytes, arena), np.uint8)
            for i, r in enumerate(host):
                self.boards[r] = shm.Board(memory, i, len(host), slot_bytes)

    def channel(self, rank: int) -> "ThreadChannel":
        """Return the channel through which ``rank`` talks to the others."""
        if not 0 <= rank < self.size:
            raise ValueError(f"rank must be in [0, {self.size}), got {rank}")
        return ThreadChannel(self, rank)

    def abort(self, reason: str) -> None:
        """Wake every waiting receiver with an error naming ``reason``."""
        self.aborted = reason
        for q in self._queues.values():
            q.put(_Abort(reason))


class ThreadChannel:
    """In-memory :class:`Channel` for one rank of a :class:`ThreadWorld`.

    ``send`` copies the buffer into the receiver's queue and returns at once, so a send
    never waits for its receiver and ``sendrecv`` is simply a send followed by a receive.
    Each channel counts what it sent in :attr:`bytes_sent` and :attr:`messages_sent`.
    """

    def __init__(self, world: ThreadWorld, rank: int) -> None:
        self.world = world
        self.rank = rank
        self.size = world.size
        self.bytes_sent = 0
        self.messages_sent = 0
        self.hosts = world.hosts
        board = world.boards.get(rank)
        self.board = None
        if board is not None and board.size > 1:
            self.board = board.session((0, 0, 0), self._idle)

    def _idle(self, late: list[int], waited: float) -> None:
        if self.world.aborted:
            raise RuntimeError(f"rank {self.rank}: gave up waiting at a sync: {self.world.aborted}")
        if waited > self.world.timeout:
            raise TimeoutError(
                f"rank {self.rank}: board ranks {late} did not reach the sync within {waited:.1f} s"
            )

    def _check_peer(self, peer: int) -> None:
        if not 0 <= peer < self.size or peer == self.rank:
            raise ValueError(f"rank {self.rank}: peer must be another rank in [0, {self.size}), got {peer}")

    def send(self, peer: int, buf: np.ndarray) -> None:
        """Copy contiguous ``buf`` into ``peer``'s inbox for this rank."""
        self._check_peer(peer)
        if not buf.flags.c_contiguous:
            raise ValueError(f"rank {self.rank}: send buffer to rank {peer} is not contiguous")
        payload = buf.reshape(-1).view(np.uint8).copy()
        self.world._queues[(self.rank, peer)].put(payload)
        self.bytes_sent += payload.nbytes
        self.messages_sent += 1

    def recv(self, peer: int, out: np.ndarray) -> None:
        """Wait for the next message from ``peer`` and copy it into contiguous ``out``."""
        self._check_peer(peer)
        if not out.flags.c_contiguous:
            raise ValueError(f"rank {self.rank}: receive buffer for rank {peer} is not contiguous")
        try:
            payload = self.world._queues[(peer, self.rank)].get(timeout=self.world.timeout)
        except queue.Empty:
            raise TimeoutError(
                f"rank {self.rank}: no message from rank {peer} within {self.world.timeout} s"
            ) from None
        if isinstance(payload, _Abort):
            raise RuntimeError(f"rank {self.rank}: gave up waiting for rank {peer}: {payload.reason}")
        if payload.nbytes != out.nbytes:
            raise ValueError(
                f"rank {self.rank}: message from rank {peer} has {payload.nbytes} bytes but "
                f"the receive buffer holds {out.nbytes} bytes ({out.size} x {out.dtype})"
            )
        np.copyto(out.reshape(-1).view(np.uint8), payload)

    def sendrecv(self, send_peer: int, send_buf: np.ndarray, recv_peer: int, recv_out: np.ndarray) -> None:
        """Send to ``send_peer``, then receive from ``recv_peer`` (sends never block)."""
        self.send(send_peer, send_buf)
        self.recv(recv_peer, recv_out)


class SubChannel:
    """Some ranks of a channel (``members``, group ranks in order) as a group of their own:
    rank ``i`` here is ``members[i]`` there. No hosts; a ``board`` only when given (the
    host's board, whose rank ``i`` is ``members[i]``): for the socket algorithms between the
    leaders of ``hierarchical.py``, and its shared-memory stages inside one host."""

    hosts = None

    def __init__(self, ch: Channel, members: list[int], board=None) -> None:
        self._ch, self._members = ch, list(members)
        self.rank, self.size = self._members.index(ch.rank), len(self._members)
        self.board = board

    def send(self, peer: int, buf: np.ndarray) -> None:
        """Send to member ``peer``."""
        self._ch.send(self._members[peer], buf)

    def recv(self, peer: int, out: np.ndarray) -> None:
        """Receive from member ``peer``."""
        self._ch.recv(self._members[peer], out)

    def sendrecv(self, send_peer: int, send_buf: np.ndarray, recv_peer: int, recv_out: np.ndarray) -> None:
        """Send to member ``send_peer`` and receive from member ``recv_peer`` at once."""
        self._ch.sendrecv(self._members[send_peer], send_buf, self._members[recv_peer], recv_out)


def run_threads(
    size: int,
    fn: Callable[[ThreadChannel], Any],
    timeout: float = DEFAULT_TIMEOUT,
    hosts: list[list[int]] | None = None,
    slot_bytes: int = shm.SLOT_BYTES,
    arena: int = 0,
) -> list[Any]:
    """Run ``fn(channel)`` on ``size`` ranks, one thread each, and return their results.

    Results are listed by rank. If any rank raises, the others are woken (their pending
    receives fail) and the first exception raised is re-raised here, with a note naming its
    rank. A rank still running ``2 * timeout`` seconds after the start raises
    ``TimeoutError``.

    Args:
        size (int): number of ranks.
        fn (callable): the work of one rank; receives that rank's :class:`ThreadChannel`.
        timeout (float): seconds each ``recv`` may wait.
        hosts, slot_bytes, arena: as for :class:`ThreadWorld` (ranks sharing a board).
    """
    world = ThreadWorld(size, timeout, hosts, slot_bytes, arena)
    results: list[Any] = [None] * size
    failures: list[tuple[int, BaseException]] = []
    lock = threading.Lock()

    def body(rank: int) -> None:
        try:
            results[rank] = fn(world.channel(rank))
        except BaseException as exc:  # noqa: BLE001 - reported to the caller below
            with lock:
                failures.append((rank, exc))
                first = len(failures) == 1
            if first:
                world.abort(f"rank {rank} failed with {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=body, args=(r,), name=f"rank{r}", daemon=True) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(2 * timeout)
    stuck = [r for r, t in enumerate(threads) if t.is_alive()]
    if failures:
        rank, exc = failures[0]
        exc.add_note(f"(raised on rank {rank} of {size})")
        raise exc
    if stuck:
        world.abort("run_threads timed out")
        raise TimeoutError(f"ranks {stuck} of {size} did not finish within {2 * timeout} s")
    return results
