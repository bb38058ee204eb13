"""A damaged or replayed stream between two ranks fails loudly, never a silent wrong result:
a flipped bit on the wire (without encryption: the payload checksum; with CURVE: the
reconnect that follows libzmq dropping the connection is caught at once by the message
numbers), a duplicated message, two swapped messages."""

from __future__ import annotations

import pytest

from dist_helpers import run_ranks

N_MESSAGES = 60


class _Tamper:
    """Stands in for a peer's DEALER socket: passes whole messages on, except message
    ``at`` (counting those with a payload), which it sends twice (``dup``) or after the
    next one (``swap``)."""

    def __init__(self, sock, how: str, at: int) -> None:
        self._sock, self._how, self._at = sock, how, at
        self._parts: list[bytes] = []
        self._count, self._held = 0, None

    def __getattr__(self, name):
        return getattr(self._sock, name)

    def send(self, data, flags=0, copy=True, track=False):
        import zmq

        self._parts.append(bytes(data))
        if not flags & zmq.SNDMORE:
            self._message(self._parts)
            self._parts = []
        return zmq.MessageTracker() if track else None

    def send_multipart(self, parts, flags=0, copy=True, track=False):
        self._message([bytes(p) for p in parts])

    def _message(self, parts: list[bytes]) -> None:
        has_payload = any(parts[1:])
        index = self._count
        self._count += has_payload
        if has_payload and index == self._at:
            if self._how == "dup":
                self._sock.send_multipart(parts)
                self._sock.send_multipart(parts)
            else:
                self._held = parts
            return
        self._sock.send_multipart(parts)
        if self._held is not None:
            self._sock.send_multipart(self._held)
            self._held = None


def _p2p_stream(rank, world_size, how):
    import disttorch as torch
    import disttorch.distributed as dist

    dist.init_process_group("gloo")
    if rank == 0:
        peer = dist.GroupMember.WORLD.transport._peers[1]
        peer.dealer = _Tamper(peer.dealer, how, at=10)
        for i in range(N_MESSAGES):
            dist.send(torch.full((4,), float(i)), dst=1)
        dist.barrier()
    else:
        for i in range(N_MESSAGES):
            t = torch.zeros(4)
            dist.recv(t, src=0)
            assert t.tolist() == [float(i)] * 4, f"message {i} received as {t.tolist()}"
        dist.barrier()
    dist.destroy_process_group()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["dup", "swap"])
def test_a_duplicated_or_swapped_message_fails_loudly(how):
    results = run_ranks(_p2p_stream, 2, args=(how,), timeout=90, check=False)
    r = results[1]
    assert r.error is not None and not r.killed, r.describe()
    assert "stream from rank 0 to rank 1 is damaged" in str(r.error), r.describe()
    assert "message 10 arrived where message" in str(r.error) or "message 11 arrived" in str(r.error)


def _proxied_all_reduces(rank, world_size, flip_at):
    """Rank 1 publishes a proxy in front of its peer socket that flips one bit of the stream
    rank 0 sends it, ``flip_at`` bytes in; every result is checked."""
    import json
    import socket
    import threading

    import disttorch as torch
    import disttorch.distributed as dist
    from disttorch.distributed.store import tcp_store

    def forward(src, dst, flip):
        seen = 0
        try:
            while data := src.recv(65536):
                if flip and seen <= flip_at < seen + len(data):
                    data = bytearray(data)
                    data[flip_at - seen] ^= 0x10
                    flip = False
                seen += len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def proxy(listener, port):
        first = True
        while True:
            client, _ = listener.accept()
            upstream = socket.create_connection(("127.0.0.1", port))
            threading.Thread(target=forward, args=(client, upstream, first), daemon=True).start()
            threading.Thread(target=forward, args=(upstream, client, False), daemon=True).start()
            first = False

    real_set = tcp_store.TCPStore.set

    def set_via_proxy(self, key, value):
        if rank == 1 and str(key).endswith("pg/0/ep/1"):
            info = json.loads(value)
            port = int(info["tcp"].rsplit(":", 1)[1])
            listener = socket.create_server(("127.0.0.1", 0))
            threading.Thread(target=proxy, args=(listener, port), daemon=True).start()
            info["tcp"] = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
            value = json.dumps(info)
        return real_set(self, key, value)

    tcp_store.TCPStore.set = set_via_proxy
    dist.init_process_group("gloo")
    for i in range(200):
        t = torch.full((4096,), float(rank + i))
        dist.all_reduce(t)
        assert t.eq(2.0 * i + 1).all().item(), f"all_reduce {i} is wrong: {t[:4].tolist()}"
    dist.destroy_process_group()


@pytest.mark.timeout(150)
@pytest.mark.parametrize("encrypt", ["0", "1"])
def test_a_flipped_bit_on_the_wire_fails_loudly_and_fast(encrypt):
    env = {"DISTTORCH_SAME_HOST_TRANSPORT": "tcp", "DISTTORCH_SHM": "0", "DISTTORCH_ENCRYPT": encrypt}
    results = run_ranks(_proxied_all_reduces, 2, args=(100_000,), env=env, timeout=120, check=False)
    for r in results:
        assert r.error is not None and not r.killed, r.describe()
        assert not isinstance(r.error, AssertionError), r.describe()  # never a wrong result
        assert "Timeout" not in type(r.error).__name__, r.describe()
    assert "stream from rank 0 to rank 1 is damaged" in str(results[1].error), results[1].describe()
