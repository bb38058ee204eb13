"""``PeerChannel``: the algorithms' ``Channel`` (see ``algorithms/channel.py``) over the transport.

The process group builds one PeerChannel per collective. It stamps every message it sends
with the collective's sequence number, op, dtype, element count and root, plus a per-peer
message counter (the header's ``chunk``), and checks all of them on every message it
receives, so ranks that disagree about the collective fail with a message naming both
sides instead of exchanging the wrong bytes::

    rank 0 called all_reduce(float32[10]) #5 but rank 1 called broadcast(float32[10], root=0) #5

Buffers of 64 KiB and more are sent without a copy; ``send`` and ``sendrecv`` return only
once ZeroMQ has let go of them (``Channel`` contract: the buffer may then be reused).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from . import wire
from .errors import CollectiveMismatchError, DistBackendError

if TYPE_CHECKING:
    from .process_group import ProcessGroup, _Op

__all__ = ["PeerChannel", "Signature"]


class Signature(NamedTuple):
    """What every rank must agree on for one collective (wire codes, see ``wire.py``)."""

    op: int
    dtype: int
    numel: int
    root: int
    redop: int = 0


class PeerChannel:
    """Point-to-point messaging for one collective of a process group (a ``Channel``)."""

    def __init__(self, pg: ProcessGroup, op: _Op, sig: Signature) -> None:
        self.rank = pg.rank()
        self.size = pg.size()
        self._pg, self._op, self._sig = pg, op, sig
        self._sent = [0] * self.size
        self._received = [0] * self.size

    def send(self, peer: int, buf: np.ndarray) -> None:
        """Send contiguous ``buf`` to group rank ``peer``; returns when ``buf`` may be reused."""
        tracker = self._post(peer, buf)
        if tracker is not None:
            self._pg.wait_sent(self._op, tracker, peer)

    def recv(self, peer: int, out: np.ndarray) -> None:
        """Receive the next message of this collective from ``peer`` into contiguous ``out``."""
        self._check_peer(peer)
        header = self._pg.receive(self._op, peer, None, out)
        self._verify(peer, header, out)

    def sendrecv(self, send_peer: int, send_buf: np.ndarray,
                 recv_peer: int, recv_out: np.ndarray) -> None:
        """Send to ``send_peer`` and receive from ``recv_peer`` at once (never deadlocks)."""
        tracker = self._post(send_peer, send_buf)
        self.recv(recv_peer, recv_out)
        if tracker is not None:
            self._pg.wait_sent(self._op, tracker, send_peer)

    def _check_peer(self, peer: int) -> None:
        if not 0 <= peer < self.size or peer == self.rank:
            raise ValueError(f"group rank {self.rank}: peer must be another rank in "
                             f"[0, {self.size}), got {peer}")

    def _post(self, peer: int, buf: np.ndarray):
        self._check_peer(peer)
        if not buf.flags.c_contiguous:
            raise ValueError(f"send buffer for group rank {peer} must be contiguous")
        sig = self._sig
        header = wire.Header(wire.DATA, self._pg.group_id, self._op.seq, 0, sig.op, sig.dtype,
                             sig.root, sig.numel, self._sent[peer], self.rank, buf.nbytes, sig.redop)
        self._sent[peer] += 1
        return self._pg.transport.send(peer, header, buf)

    def _verify(self, peer: int, h: wire.Header, out: np.ndarray) -> None:
        sig, name = self._sig, self._pg.name
        if (h.kind not in (wire.DATA, wire.SHM)
                or (h.seq, h.op, h.dtype, h.numel, h.root, h.redop) != (self._op.seq, *sig)):
            mine_seq, mine = self._op.seq, wire.describe(*sig)
            if h.seq != mine_seq and h.seq in self._pg.recent:   # a leftover of an earlier collective
                mine_seq, mine = h.seq, self._pg.recent[h.seq]
            raise CollectiveMismatchError(
                f"{name(self.rank)} called {mine} #{mine_seq} but "
                f"{name(peer)} called {wire.describe(h.op, h.dtype, h.numel, h.root, h.redop)} #{h.seq}; "
                "every rank must issue the same collectives in the same order with the same "
                "dtype, size, root and reduce op")
        expected = self._received[peer]
        if h.chunk != expected:
            raise DistBackendError(f"message {h.chunk} of {self._op.description} from "
                                   f"{name(peer)} arrived where message {expected} was due")
        self._received[peer] += 1
        if h.nbytes != out.nbytes:
            raise CollectiveMismatchError(
                f"in {self._op.description}, {name(peer)} sent {h.nbytes} bytes as message "
                f"{h.chunk} but {name(self.rank)} expected {out.nbytes} bytes; the ranks chose "
                "different algorithms (is DISTTORCH_ALGORITHM the same on every rank?)")
