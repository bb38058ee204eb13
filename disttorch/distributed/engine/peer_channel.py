"""``PeerChannel``: the algorithms' ``Channel`` (see ``algorithms/channel.py``) over the
transport, and ``Link``: the receive loop and send completion it (and ``p2p``) run on.

A message's path runs one way: the process group's thread runs a collective's algorithm on a
PeerChannel, which stamps and checks messages and hands them to the group's ``Link``, which
owns the receive loop over the ``Transport``. Nothing here calls back into the group but its
health check, which the group gives the Link when it makes it.

The process group builds one PeerChannel per collective. It stamps every message it sends
with the collective's sequence number, op, dtype, element count and root, plus a per-peer
message counter (the header's ``chunk``), and checks all of them on every message it
receives, so ranks that disagree about the collective fail with a message naming both
sides instead of exchanging the wrong bytes::

    rank 0 called all_reduce(float32[10]) #5 but rank 1 called broadcast(float32[10], root=0) #5

Buffers of 64 KiB and more are sent without a copy; ``send`` and ``sendrecv`` return only
once ZeroMQ has let go of them (``Channel`` contract: the buffer may then be reused).

When the transport shares memory with the ranks of this host (``wire/shm.py``), the channel
also offers ``board`` (this collective's session of the host's segment: its syncs carry
the same signature, compared at every sync, and wait under the same health checks as a
receive) and ``hosts`` (the group ranks of every host), for ``algorithms/shm.py`` and
``algorithms/hierarchical.py``; both are ``None`` otherwise. The board then also carries
which collective each rank of the host is in: while this collective waits (on the sockets
or the board), a host rank in another collective of the same sequence number is a mismatch,
as is a message of this sequence number with another signature from any peer, waiting in
the transport's stash while this rank waits for another peer.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Callable, NamedTuple

import numpy as np

from ..base.errors import CollectiveMismatchError, DistBackendError
from ..wire import frames as wire
from ..wire import shm
from ..wire.transport import POLL_SLICE, Transport

if TYPE_CHECKING:
    from .process_group import _Op

__all__ = ["Link", "PeerChannel", "Signature"]


class Signature(NamedTuple):
    """What every rank must agree on for one collective (wire codes, see ``wire/frames.py``)."""

    op: int
    dtype: int
    numel: int
    root: int
    redop: int = 0


class Link:
    """The way a process group's messages go out and come in over its transport.

    ``receive`` is the receive loop (the transport's stash, then pumping it until the
    message is there) and ``wait_sent`` waits for a zero-copy send to leave its buffer.
    While they wait they call ``check(op, peer, p2p)``, the group's health check (errors
    peers reported, peers gone, the deadline, stall warnings), which raises to stop them,
    and after every pump ``arrived()``, which completes the group's posted receives.
    """

    def __init__(
        self,
        transport: Transport,
        check: Callable[[_Op, int | None, bool], None],
        arrived: Callable[[], None] = lambda: None,
    ) -> None:
        self.transport = transport
        self._check = check
        self._arrived = arrived

    def _pump(self, timeout: float, want: tuple | None = None) -> wire.Header | None:
        header = self.transport.pump(timeout, want)
        self._arrived()
        return header

    def send(self, peer: int, header: wire.Header, buf: np.ndarray):
        """Post ``header`` + ``buf`` to ``peer``; a tracker when sent without a copy, else None."""
        return self.transport.send(peer, header, buf)

    def receive(self, op: _Op, peer: int | None, key: int | None, out: np.ndarray | None) -> wire.Header:
        """Wait for the next message from ``peer`` (any peer if ``None``) on ``key``.

        Its payload is copied into ``out`` when the sizes agree (the caller checks them).
        Raises the group's health errors while waiting (see the module docstring).
        """
        t = self.transport
        want = (peer, key, out) if peer is not None and out is not None else None

        def take() -> wire.Header | None:
            for p in [peer] if peer is not None else t.waiting_from(key):
                header = t.take(p, key, out)
                if header is not None:
                    return header
            return None

        while True:
            # Look in the stash before and after waiting: a message and a goodbye may
            # arrive together, and the message must win.
            header = (
                take()
                or self._pump(min(POLL_SLICE, max(0.0, op.deadline - time.monotonic())), want)
                or take()
            )
            if header is not None:
                op.heard.add(header.sender)
                return header
            self._check(op, peer, key is not None)

    def idle(self, op: _Op, peer: int, still_late: Callable[[], bool]) -> None:
        """Between waits for ``peer`` outside the sockets (a shared-memory sync): take in
        what the sockets bring (errors, goodbyes, liveness) and run the health check, unless
        ``still_late()`` says ``peer`` arrived meanwhile (then a goodbye it sent after
        arriving, taken in by this pump, is no failure)."""
        self._pump(0)
        if still_late():
            self._check(op, peer, False)

    def wait_sent(self, op: _Op, tracker, peer: int, p2p: bool = False) -> None:
        """Wait until a zero-copy send to ``peer`` has left its buffer."""
        while not tracker.done:
            try:
                tracker.wait(POLL_SLICE)
            except Exception:  # noqa: BLE001 - zmq.NotDone: still in flight
                pass
            if not tracker.done:
                self._pump(0)
                self._check(op, peer, p2p)


class PeerChannel:
    """Point-to-point messaging for one collective of a process group (a ``Channel``)."""

    def __init__(
        self,
        link: Link,
        group_id: int,
        rank: int,
        size: int,
        name: Callable[[int], str],
        op: _Op,
        sig: Signature,
        recent: Mapping[int, str] | None = None,
    ) -> None:
        self.rank = rank
        self.size = size
        self._link, self._group_id, self._name = link, group_id, name
        self._recent = {} if recent is None else recent  # seq -> description of the group's last collectives
        self._op, self._sig = op, sig
        self._sent = [0] * self.size
        self._received = [0] * self.size
        t = getattr(link, "transport", None)  # None: a group of one (or a test double)
        self.hosts: list[list[int]] | None = t.hosts if t is not None and t.shared else None
        self.board: shm.Session | None = None
        if t is not None and t.board is not None:
            local = next(h for h in t.hosts if rank in h)
            self.board = t.board.session(
                _stamp(op.seq, sig), lambda late, _: self._idle(local[late[0]], late[0])
            )
            self.board.mismatch = lambda peer, theirs: self.disagreement(local[peer], *_unstamp(theirs))
        if t is not None:
            op.watch = self._watch

    def _watch(self) -> None:
        """Part of the group's health check while this collective waits: raise if a peer is in
        another collective under this one's sequence number, as a message it sent (and this
        rank does not wait for yet) or, on this host, the board says. (A rank waiting for one
        peer would otherwise see the others' disagreement only at the stall warning.)"""
        t = self._link.transport
        for peer in t.waiting_from(None):
            h = t.first(peer, None)
            theirs = Signature(h.op, h.dtype, h.numel, h.root, h.redop)
            if h.seq == self._op.seq and theirs != self._sig:
                raise self.disagreement(peer, theirs)
        hit = self.board.disagreeing() if self.board is not None else None
        if hit is not None:
            raise self.board.mismatch(*hit)

    def _idle(self, late: int, on_board: int) -> None:
        """While this rank waits for group rank ``late`` (board rank ``on_board``) at a sync
        of the board: the group's health checks, and on a single host a collective message
        that came over the sockets meanwhile means its sender chose another algorithm."""
        self._link.idle(self._op, late, lambda: self.board.is_late(on_board))
        if len(self.hosts) == 1:
            for peer in self._link.transport.waiting_from(None):
                raise CollectiveMismatchError(
                    f"in {self._op.description}, {self._name(peer)} sent a message over the "
                    f"sockets while {self._name(self.rank)} waits in shared memory: the ranks "
                    "chose different algorithms (is DISTTORCH_ALGORITHM the same on every rank?)"
                )

    @property
    def signature(self) -> Signature:
        """What every rank must agree on for this collective."""
        return self._sig

    def disagreement(self, peer: int, theirs: Signature, seq: int | None = None) -> CollectiveMismatchError:
        """The error for group rank ``peer`` having called ``theirs`` as collective ``seq``
        (default: this one) where this rank called this collective (or, for a leftover of an
        earlier collective, what this rank called then)."""
        seq = self._op.seq if seq is None else seq
        mine_seq, mine = self._op.seq, wire.describe(*self._sig)
        if seq != mine_seq and seq in self._recent:  # a leftover of an earlier collective
            mine_seq, mine = seq, self._recent[seq]
        return CollectiveMismatchError(
            f"{self._name(self.rank)} called {mine} #{mine_seq} but "
            f"{self._name(peer)} called {wire.describe(*theirs)} #{seq}; "
            "every rank must issue the same collectives in the same order with the same "
            "dtype, size, root and reduce op"
        )

    def send(self, peer: int, buf: np.ndarray) -> None:
        """Send contiguous ``buf`` to group rank ``peer``; returns when ``buf`` may be reused."""
        tracker = self._post(peer, buf)
        if tracker is not None:
            self._link.wait_sent(self._op, tracker, peer)

    def recv(self, peer: int, out: np.ndarray) -> None:
        """Receive the next message of this collective from ``peer`` into contiguous ``out``."""
        self._check_peer(peer)
        header = self._link.receive(self._op, peer, None, out)
        self._verify(peer, header, out)

    def sendrecv(self, send_peer: int, send_buf: np.ndarray, recv_peer: int, recv_out: np.ndarray) -> None:
        """Send to ``send_peer`` and receive from ``recv_peer`` at once (never deadlocks)."""
        tracker = self._post(send_peer, send_buf)
        self.recv(recv_peer, recv_out)
        if tracker is not None:
            self._link.wait_sent(self._op, tracker, send_peer)

    def _check_peer(self, peer: int) -> None:
        if not 0 <= peer < self.size or peer == self.rank:
            raise ValueError(
                f"group rank {self.rank}: peer must be another rank in [0, {self.size}), got {peer}"
            )

    def _post(self, peer: int, buf: np.ndarray):
        self._check_peer(peer)
        if not buf.flags.c_contiguous:
            raise ValueError(f"send buffer for group rank {peer} must be contiguous")
        sig = self._sig
        header = wire.Header(
            wire.DATA,
            self._group_id,
            self._op.seq,
            0,
            sig.op,
            sig.dtype,
            sig.root,
            sig.numel,
            self._sent[peer],
            self.rank,
            buf.nbytes,
            sig.redop,
        )
        self._sent[peer] += 1
        return self._link.send(peer, header, buf)

    def _verify(self, peer: int, h: wire.Header, out: np.ndarray) -> None:
        sig, name = self._sig, self._name
        if h.kind != wire.DATA or (h.seq, h.op, h.dtype, h.numel, h.root, h.redop) != (self._op.seq, *sig):
            raise self.disagreement(peer, Signature(h.op, h.dtype, h.numel, h.root, h.redop), h.seq)
        expected = self._received[peer]
        if h.chunk != expected:
            raise DistBackendError(
                f"message {h.chunk} of {self._op.description} from "
                f"{name(peer)} arrived where message {expected} was due"
            )
        self._received[peer] += 1
        if h.nbytes != out.nbytes:
            why = (
                # sizes that vary between pairs (all_to_all) come from each rank's own arguments
                "the sizes that ranks send each other must match what their peers receive "
                "(input_split_sizes against output_split_sizes, or the tensors of "
                "input_tensor_list against output_tensor_list)"
                if sig.numel < 0
                else "the ranks chose different algorithms (is DISTTORCH_ALGORITHM the same on every rank?)"
            )
            raise CollectiveMismatchError(
                f"in {self._op.description}, {name(peer)} sent {h.nbytes} bytes as message "
                f"{h.chunk} but {name(self.rank)} expected {out.nbytes} bytes; {why}"
            )


def _stamp(seq: int, sig: Signature) -> shm.Stamp:
    """A collective's sequence number and signature as the three words of a board stamp."""
    code = sig.op | sig.dtype << 8 | sig.redop << 16 | (sig.root + 1) << 24
    return seq, code, sig.numel & 0xFFFFFFFFFFFFFFFF


def _unstamp(stamp: shm.Stamp) -> tuple[Signature, int]:
    """A board stamp back as the collective's signature and sequence number."""
    seq, code, numel = stamp
    numel = numel - (1 << 64) if numel >= 1 << 63 else numel
    return Signature(code & 0xFF, code >> 8 & 0xFF, numel, (code >> 24) - 1, code >> 16 & 0xFF), seq
