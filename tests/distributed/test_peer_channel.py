"""PeerChannel over a Link: the channel stamps and checks messages and hands them to the link
only (it holds no process group), so a message's path runs one way. In one process, with a
link that records what it is asked to do."""

import numpy as np
import pytest

from disttorch.distributed.base.errors import CollectiveMismatchError, DistBackendError
from disttorch.distributed.engine.peer_channel import PeerChannel, Signature
from disttorch.distributed.engine.process_group import _Op
from disttorch.distributed.wire import frames as wire


class _Tracker:
    done = False


class RecordingLink:
    """A Link that records sends and answers receives from a queue of headers."""

    def __init__(self, incoming=()):
        self.sent, self.waited, self.received = [], [], []
        self.incoming = list(incoming)

    def send(self, peer, header, buf):
        self.sent.append((peer, header, buf.copy()))
        return _Tracker()

    def wait_sent(self, op, tracker, peer, p2p=False):
        self.waited.append((op.seq, peer, p2p))

    def receive(self, op, peer, key, out):
        self.received.append((op.seq, peer, key))
        header, payload = self.incoming.pop(0)
        out[...] = payload
        return header


SIG = Signature(wire.op_code("all_reduce"), wire.dtype_code(np.dtype(np.float32)), 4, -1)


def _channel(link, rank=0, size=2):
    return PeerChannel(link, 7, rank, size, lambda r: f"rank {r}", _Op(5, "all_reduce #5", 30.0, 10.0), SIG)


def _header(sender=1, chunk=0, seq=5, sig=SIG, nbytes=16):
    return wire.Header(wire.DATA, 7, seq, 0, sig.op, sig.dtype, sig.root, sig.numel, chunk, sender, nbytes)


def test_send_stamps_the_collective_and_waits_through_the_link():
    link = RecordingLink()
    channel = _channel(link)
    buf = np.arange(4, dtype=np.float32)
    channel.send(1, buf)
    channel.send(1, buf)
    (peer, h0, data), (_, h1, _) = link.sent
    assert peer == 1 and (h0.group, h0.seq, h0.op, h0.numel, h0.sender, h0.nbytes) == (7, 5, SIG.op, 4, 0, 16)
    assert (h0.chunk, h1.chunk) == (0, 1)  # per-peer message counter
    np.testing.assert_array_equal(data, buf)
    assert link.waited == [(5, 1, False), (5, 1, False)]


def test_recv_takes_from_the_link_and_checks_order_and_signature():
    payload = np.full(4, 2.5, dtype=np.float32)
    link = RecordingLink([(_header(chunk=0), payload), (_header(chunk=2), payload)])
    channel = _channel(link)
    out = np.empty(4, dtype=np.float32)
    channel.recv(1, out)
    np.testing.assert_array_equal(out, payload)
    assert link.received == [(5, 1, None)]
    with pytest.raises(
        DistBackendError, match="message 2 of all_reduce #5 from rank 1 arrived where message 1"
    ):
        channel.recv(1, out)


def test_recv_names_both_sides_of_a_mismatched_collective():
    other = Signature(wire.op_code("broadcast"), SIG.dtype, 4, 0)
    link = RecordingLink([(_header(sig=other), np.zeros(4, np.float32))])
    with pytest.raises(
        CollectiveMismatchError,
        match=r"rank 0 called all_reduce\(float32\[4\]\) #5 but "
        r"rank 1 called broadcast\(float32\[4\], root=0\) #5",
    ):
        _channel(link).recv(1, np.empty(4, dtype=np.float32))


def test_a_channel_refuses_itself_and_unknown_peers():
    channel = _channel(RecordingLink())
    for peer in (0, 2, -1):
        with pytest.raises(ValueError, match=r"peer must be another rank in \[0, 2\)"):
            channel.send(peer, np.zeros(4, np.float32))
