"""Hardening of the TCP store: raw garbage, unauthenticated clients, malformed and oversized frames,
memory caps, while legitimate clients keep working."""

from __future__ import annotations

import logging
import os
import random
import socket
import struct
import threading
import time
from datetime import timedelta

import pytest
import zmq

from disttorch.distributed.base import auth
from disttorch.distributed.base.log import RateLimitedLog
from disttorch.distributed.store import DistStoreError, TCPStore, protocol, tcp_server
from disttorch.distributed.store.protocol import Command, ProtocolError, Status
from disttorch.distributed.store.recent_replies import REPLY_DROPPED, RecentReplies
from disttorch.distributed.store.table import KeyValueTable, StoreFullError

SECRET = "0123456789abcdef" * 2


@pytest.fixture(autouse=True)
def _no_inherited_job_secret(monkeypatch):
    """Tests choose their secrets themselves; ignore any the calling shell exported."""
    monkeypatch.delenv("DISTTORCH_JOB_SECRET", raising=False)
    monkeypatch.delenv("DISTTORCH_ENCRYPT", raising=False)


@pytest.fixture
def master():
    store = TCPStore("127.0.0.1", 0, is_master=True, timeout=timedelta(seconds=10), secret=SECRET)
    yield store
    store.close()


class RawClient:
    """A DEALER socket that sends whatever frames a test likes (with or without the job's credentials)."""

    def __init__(self, port: int, secret: bytes | None, encrypt: bool = True) -> None:
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.DEALER)
        self.socket.linger = 0
        auth.configure_client(self.socket, secret, encrypt=encrypt)
        self.socket.connect(f"tcp://127.0.0.1:{port}")

    def send(self, frames: list[bytes]) -> None:
        self.socket.send_multipart(frames)

    def reply(self, timeout_ms: int = 3000) -> list[bytes] | None:
        return self.socket.recv_multipart() if self.socket.poll(timeout_ms) else None

    def close(self) -> None:
        self.socket.close(linger=0)
        self.context.term()


def _server(store: TCPStore) -> tcp_server.StoreServer:
    assert store._server is not None
    return store._server


def _still_serving(store: TCPStore, port: int, tag: str) -> None:
    with TCPStore("127.0.0.1", port, timeout=timedelta(seconds=10), secret=SECRET) as client:
        client.set(f"alive/{tag}", tag)
        assert store.get(f"alive/{tag}") == tag.encode()
        assert client.add(f"count/{tag}", 2) == 2


# ---------------------------------------------------------------- raw TCP


@pytest.mark.timeout(60)
def test_raw_tcp_garbage_while_a_client_works(master):
    port = master.port
    stop = threading.Event()
    errors: list[BaseException] = []
    done = [0]

    def legitimate_client() -> None:
        try:
            with TCPStore("127.0.0.1", port, timeout=timedelta(seconds=10), secret=SECRET) as client:
                while not stop.is_set():
                    done[0] += 1
                    client.set("progress", str(done[0]))
                    assert client.get("progress") == str(done[0]).encode()
        except BaseException as error:  # surfaced below
            errors.append(error)

    worker = threading.Thread(target=legitimate_client)
    worker.start()
    rng = random.Random(0)
    greeting = b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00" + b"NULL" + b"\x00" * 16 + b"\x00" + b"\x00" * 31
    payloads = [
        lambda: os.urandom(rng.randint(1, 4096)),
        lambda: greeting,  # a valid ZMTP 3.0 greeting with the wrong mechanism...
        lambda: greeting + os.urandom(512),  # ...followed by junk
        lambda: greeting[:7],  # truncated greeting
        lambda: b"\xff" + b"\xff" * 8 + b"\x7f" + os.urandom(64),  # absurd length prefix
        lambda: os.urandom(1 << 20),  # a megabyte of noise
    ]
    delivered = 0  # connections the store accepted and that sent their garbage, whole or in part
    for i in range(300):
        with socket.create_connection(("127.0.0.1", port), timeout=2) as raw:
            delivered += 1
            try:
                raw.sendall(payloads[i % len(payloads)]())
            except OSError:
                pass  # the store may hang up mid-send (a megabyte of noise, say): that is the point
    time.sleep(0.2)
    stop.set()
    worker.join(timeout=20)
    assert not errors, errors
    assert delivered == 300 and done[0] > 10
    _still_serving(master, port, "after-garbage")
    assert master.num_keys() == 3  # progress + alive + count: nothing else got in


# ---------------------------------------------------------------- unauthenticated ZeroMQ peers


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "secret, encrypt",
    [(None, False), (b"wrong secret", True), (b"wrong secret", False), (bytes.fromhex(SECRET), False)],
    ids=["no-secret", "wrong-secret", "wrong-secret-plain", "right-secret-but-plain"],
)
def test_unauthenticated_requests_never_reach_the_store(master, secret, encrypt):
    intruder = RawClient(master.port, secret, encrypt)
    try:
        for i in range(50):
            intruder.send(protocol.encode_request(Command.SET, i, b"owned", b"yes"))
        assert intruder.reply(timeout_ms=500) is None
    finally:
        intruder.close()
    assert not master.check(["owned"])
    assert _server(master).malformed == 0  # dropped by the handshake, before the store saw anything
    _still_serving(master, master.port, "after-intruder")


class RecordingProxy:
    """Forwards one TCP connection to ``port``, recording what the client sent (to replay it later)."""

    def __init__(self, port: int) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.target = port
        self.sent = bytearray()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        client, _ = self.listener.accept()
        server = socket.create_connection(("127.0.0.1", self.target))

        def pump(src: socket.socket, dst: socket.socket, record: bool) -> None:
            try:
                while data := src.recv(65536):
                    if record:
                        self.sent.extend(data)
                    dst.sendall(data)
            except OSError:
                pass
            finally:
                dst.close()

        threading.Thread(target=pump, args=(server, client, False), daemon=True).start()
        pump(client, server, True)


def _zmtp_pieces(stream: bytes) -> list[bytes]:
    """Split a recorded ZMTP 3 stream into its 64-byte greeting and its frames."""
    pieces, position = [stream[:64]], 64
    while position < len(stream):
        long_frame = stream[position] & 0x02
        header = 9 if long_frame else 2
        size = int.from_bytes(stream[position + 1 : position + header], "big")
        pieces.append(stream[position : position + header + size])
        position += header + size
    return pieces


@pytest.mark.timeout(60)
def test_a_recorded_session_cannot_be_replayed(master):
    proxy = RecordingProxy(master.port)
    with TCPStore("127.0.0.1", proxy.port, timeout=timedelta(seconds=10), secret=SECRET) as client:
        client.set("replayed", "original")
        assert client.get("replayed") == b"original"
    time.sleep(0.2)
    assert master.delete_key("replayed")
    pieces = _zmtp_pieces(bytes(proxy.sent))
    assert len(pieces) > 4  # greeting, handshake commands, messages
    with socket.create_connection(("127.0.0.1", master.port)) as raw:
        try:
            for piece in pieces:  # paced as the real client was (a PLAIN session replays like this)
                raw.sendall(piece)
                time.sleep(0.05)
        except OSError:
            pass  # the server hung up: the replay failed
    time.sleep(0.3)
    assert not master.check(["replayed"])  # CURVE's per-connection keys make the replay worthless
    _still_serving(master, master.port, "after-replay")


def _non_loopback_ipv4() -> str | None:
    psutil = pytest.importorskip("psutil")
    for addresses in psutil.net_if_addrs().values():
        for address in addresses:
            if address.family == socket.AF_INET and not address.address.startswith("127."):
                return address.address
    return None


@pytest.mark.timeout(30)
def test_without_a_secret_only_clients_of_this_host_are_admitted():
    """Without a secret the store admits loopback clients and clients from this host's own
    addresses (the same machine could reach it over loopback anyway); a client on another
    host is refused, which tests/distributed/test_dist_join_checks.py checks across two
    network namespaces."""
    address = _non_loopback_ipv4()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    with TCPStore("0.0.0.0", 0, is_master=True, timeout=timedelta(seconds=5), secret=None) as master:
        with TCPStore(address, master.port, timeout=timedelta(seconds=5), secret=None) as own:
            own.set("own address", "welcome")
        with TCPStore("127.0.0.1", master.port, timeout=timedelta(seconds=5), secret=None) as local:
            local.set("local", "welcome")
        assert master.get("own address") == b"welcome"
    with TCPStore(address, 0, is_master=True, timeout=timedelta(seconds=5), secret=SECRET) as master:
        assert master._server.host == address  # listens on that interface only
        with TCPStore(address, master.port, timeout=timedelta(seconds=5), secret=SECRET) as remote:
            remote.set("remote", "welcome with the secret")
        assert master.get("remote") == b"welcome with the secret"


@pytest.mark.timeout(60)
def test_idle_half_open_connections_do_not_block_clients(master):
    idle = []
    try:
        for _ in range(100):
            raw = socket.create_connection(("127.0.0.1", master.port))
            raw.sendall(b"\xff\x00\x00")  # a greeting that never completes
            idle.append(raw)
        _still_serving(master, master.port, "with-idle-connections")
    finally:
        for raw in idle:
            raw.close()


# ---------------------------------------------------------------- malformed frames from a member


MALFORMED = [
    [b""],
    [b"\x01"],  # truncated header
    [b"\x09" + b"\x01" + b"\x00" * 8],  # wrong protocol version
    [struct.pack("!BBQ", 1, 99, 7)],  # unknown command
    [struct.pack("!BBQ", 1, Command.SET, 8), b"only a key"],  # wrong frame count
    [struct.pack("!BBQ", 1, Command.SET, 9), b"", b"empty key"],
    [struct.pack("!BBQ", 1, Command.SET, 10), b"k" * (protocol.MAX_KEY_BYTES + 1), b"v"],
    [struct.pack("!BBQ", 1, Command.GET, 11), b"k", b"\x00\x01"],  # short timeout field
    [struct.pack("!BBQ", 1, Command.GET, 12), b"k", struct.pack("!q", -5)],  # negative timeout
    [struct.pack("!BBQ", 1, Command.WAIT, 13), struct.pack("!q", 10)],  # no keys
    [struct.pack("!BBQ", 1, Command.ADD, 14), b"k", b"\x01\x02\x03"],
    [struct.pack("!BBQ", 1, Command.WAIT_WORKERS, 15), struct.pack("!q", 0), struct.pack("!q", 10)],
    [struct.pack("!BBQ", 1, Command.CHECK, 16)],
    [struct.pack("!BBQ", 1, Command.NUM_KEYS, 17), b"extra"],
]


@pytest.mark.timeout(60)
def test_malformed_frames_are_dropped_logged_and_answered(master, caplog):
    member = RawClient(master.port, bytes.fromhex(SECRET))
    try:
        with caplog.at_level(logging.WARNING, logger="disttorch.distributed.store"):
            for frames in MALFORMED:
                member.send(frames)
            replies = []
            while (frames := member.reply(timeout_ms=1000)) is not None:
                replies.append(protocol.decode_reply(frames))
            # every request with a header of the right size got an ERROR naming the problem
            assert sorted(r[0] for r in replies) == [0, 7, *range(8, 18)]
            assert all(status is Status.ERROR for _, status, _ in replies)
            other_version = next(payload[0] for rid, _, payload in replies if rid == 0)
            assert b"store protocol version 9 where the store speaks 1" in other_version
            assert b"different disttorch versions" in other_version
            assert any(b"SET takes 2 argument frames, got 1" in payload[0] for _, _, payload in replies)
            member.send(protocol.encode_request(Command.SET, 99, b"valid", b"after junk"))
            assert protocol.decode_reply(member.reply()) == (99, Status.OK, [])
        assert _server(master).malformed == len(MALFORMED)
        assert "dropped malformed store request" in caplog.text
    finally:
        member.close()
    assert master.get("valid") == b"after junk"
    assert master.num_keys() == 1


@pytest.mark.timeout(30)
def test_a_process_of_another_version_fails_fast_on_both_sides(master, monkeypatch):
    """A process of another disttorch (another store protocol) is answered with an error
    naming both versions, and the waits for it fail after the refusal's grace (both sides
    waited out their whole timeout before)."""
    monkeypatch.setattr(tcp_server, "AUTH_FAILURE_GRACE", 0.2)
    waiting: dict = {}

    def wait_for_it() -> None:
        try:
            master.get("from the other version")
        except DistStoreError as error:
            waiting["error"] = error

    waiter = threading.Thread(target=wait_for_it)
    waiter.start()
    other = RawClient(master.port, bytes.fromhex(SECRET))
    try:
        other.send([struct.pack("!BBQ", protocol.PROTOCOL_VERSION + 1, Command.HELLO, 5)])
        rid, status, payload = protocol.decode_reply(other.reply())
    finally:
        other.close()
    assert (rid, status) == (5, Status.ERROR)
    assert b"store protocol version 2 where the store speaks 1" in payload[0]
    waiter.join(timeout=10)
    assert "different disttorch versions" in str(waiting.get("error")), waiting


@pytest.mark.timeout(60)
def test_random_frames_from_a_member_never_crash_the_server(master):
    member = RawClient(master.port, bytes.fromhex(SECRET))
    rng = random.Random(1)
    try:
        for i in range(2000):
            frames = [os.urandom(rng.choice([0, 1, 9, 10, 11, 64])) for _ in range(rng.randint(1, 5))]
            if rng.random() < 0.5:  # a valid header with random arguments
                frames[0] = struct.pack("!BBQ", 1, rng.randint(1, 11), i)
            member.send(frames)
        _still_serving(master, master.port, "after-fuzz")
    finally:
        member.close()
    assert _server(master).malformed > 500


def test_a_flood_of_bad_input_logs_a_burst_then_a_line_per_interval(caplog):
    """A member sending garbage forever (70,000 messages a second here) once logged a line per
    1,000 of them: 70 lines a second for as long as it kept on."""
    flooded = RateLimitedLog(logging.getLogger("disttorch.test.flood"), burst=5, interval=60.0)
    with caplog.at_level(logging.WARNING, logger="disttorch.test.flood"):
        for i in range(20_000):
            flooded.warning("dropped %d", i)
        assert len(caplog.records) == 5
        flooded.interval = 0.0  # the interval has passed
        flooded.warning("dropped %d", 20_000)
    assert len(caplog.records) == 6
    assert caplog.records[-1].getMessage() == "dropped 20000 (20001 such messages so far; most not logged)"


@pytest.mark.timeout(60)
def test_oversized_frame_drops_only_the_sender(master):
    member = RawClient(master.port, bytes.fromhex(SECRET))
    try:
        member.send(
            protocol.encode_request(Command.SET, 1, b"huge", b"\0" * (protocol.MAX_VALUE_BYTES + 4096))
        )
        assert member.reply(timeout_ms=1500) is None  # ZeroMQ's MAXMSGSIZE cut the connection
    finally:
        member.close()
    assert not master.check(["huge"])
    _still_serving(master, master.port, "after-oversize")


def test_parse_request_raises_only_protocol_errors_on_random_input():
    rng = random.Random(2)
    accepted = 0
    for i in range(20000):
        frames = [
            bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 8, 10, 12])))
            for _ in range(rng.randint(0, 4))
        ]
        if frames and rng.random() < 0.7:
            frames[0] = struct.pack("!BBQ", 1, rng.randint(0, 12), i)
        try:
            protocol.parse_request(frames)
            accepted += 1
        except ProtocolError:
            pass
    assert accepted > 0  # the generator does hit valid shapes too


# ---------------------------------------------------------------- memory caps


def test_table_caps_keys_and_bytes():
    table = KeyValueTable(max_keys=2, max_bytes=100)
    table.set(b"a", b"1")
    table.set(b"b", b"2")
    table.set(b"a", b"overwrite is fine")
    with pytest.raises(StoreFullError, match="maximum of 2 keys"):
        table.set(b"c", b"3")
    with pytest.raises(StoreFullError, match="above its cap of 100"):
        table.set(b"a", b"x" * 200)
    assert table.delete(b"a")
    table.set(b"c", b"now fits")
    assert len(table) == 2


@pytest.mark.timeout(30)
def test_full_store_refuses_with_a_clear_error(master):
    _server(master).table.max_keys = 1
    master.set("one", "fits")
    with pytest.raises(DistStoreError, match="refused SET: store holds its maximum of 1 keys"):
        master.set("two", "does not")
    master.set("one", "overwriting still works")


@pytest.mark.timeout(30)
def test_pending_waiters_are_capped(master, monkeypatch):
    monkeypatch.setattr(tcp_server, "MAX_WAITERS", 2)
    member = RawClient(master.port, bytes.fromhex(SECRET))
    try:
        for request_id in (1, 2, 3):
            member.send(protocol.encode_request(Command.GET, request_id, b"never", protocol.pack_i64(60_000)))
        request_id, status, payload = protocol.decode_reply(member.reply())
        assert (request_id, status) == (3, Status.ERROR)
        assert b"maximum of 2 pending" in payload[0]
        master.set("never", "now")  # the two parked gets are answered
        answered = sorted(protocol.decode_reply(member.reply())[0] for _ in range(2))
        assert answered == [1, 2]
    finally:
        member.close()


@pytest.mark.timeout(30)
def test_waiters_expire_on_the_server(master):
    member = RawClient(master.port, bytes.fromhex(SECRET))
    try:
        member.send(protocol.encode_request(Command.WAIT, 5, protocol.pack_i64(100), b"x", b"y"))
        request_id, status, payload = protocol.decode_reply(member.reply())
        assert (request_id, status, sorted(payload)) == (5, Status.TIMEOUT, [b"x", b"y"])
        assert _server(master)._pending == 0
    finally:
        member.close()


@pytest.mark.parametrize("secret", ["ab" * 32, None], ids=["secret", "no secret"])
def test_a_listener_that_never_answers_is_not_said_to_have_another_secret(monkeypatch, secret):
    # rank 0 stalled or out of descriptors looks like this: the port accepts, nothing answers
    # (nor does another program's server: an HTTP server waits for a request)
    from disttorch.distributed.store import tcp_store

    monkeypatch.setattr(tcp_store, "HANDSHAKE_TIMEOUT_MS", 300)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        port = silent.getsockname()[1]
        with pytest.raises(auth.AuthenticationError) as info:
            TCPStore("127.0.0.1", port, world_size=2, timeout=timedelta(seconds=10), secret=secret)
    message = str(info.value)
    assert "did not answer the handshake" in message and "out of file descriptors" in message, message
    assert "secrets differ" not in message and "refused" not in message, message


@pytest.mark.timeout(30)
def test_a_request_sent_again_is_applied_once_and_answered_alike(master):
    """A client's resend (same routing id, same request id) gets the first reply back."""
    workers = _server(master)._workers
    member = RawClient(master.port, bytes.fromhex(SECRET))
    try:
        for frames in (
            protocol.encode_request(Command.HELLO, 1),
            protocol.encode_request(Command.ADD, 2, b"counter", protocol.pack_i64(5)),
            protocol.encode_request(Command.APPEND, 3, b"log", b"x"),
        ):
            member.send(frames)
            first = member.reply()
            member.send(frames)
            assert member.reply() == first
        assert _server(master)._workers == workers + 1
        assert master.add("counter", 0) == 5
        assert master.get("log") == b"x"
        member.send(protocol.encode_request(Command.ADD, 4, b"counter", protocol.pack_i64(5)))
        assert protocol.decode_reply(member.reply())[2] == [protocol.pack_i64(10)]  # a new id applies
    finally:
        member.close()


def test_remembered_replies_are_bounded_in_clients_and_bytes():
    recent = RecentReplies(max_clients=2, max_reply_bytes=10)
    recent.remember(b"a", 1, [b"1234"])
    recent.remember(b"b", 7, [b"1234"])
    assert recent.replay(b"a", 1) == [b"1234"] and recent.replay(b"a", 2) is None
    recent.remember(b"c", 3, [b"1234"])  # a third client: the least recent (a) is forgotten
    assert len(recent) == 2 and recent.replay(b"a", 1) is None
    assert recent.reply_bytes == 8
    recent.remember(b"c", 4, [b"1234567"])  # over 10 bytes: b's reply is dropped, its id kept
    assert recent.replay(b"b", 7) is REPLY_DROPPED
    assert recent.replay(b"c", 4) == [b"1234567"] and recent.reply_bytes == 7


@pytest.mark.timeout(30)
def test_a_resend_whose_reply_was_dropped_is_refused_not_applied_again(master):
    _server(master)._recent.max_reply_bytes = 0
    member = RawClient(master.port, bytes.fromhex(SECRET))
    try:
        frames = protocol.encode_request(Command.ADD, 1, b"counter", protocol.pack_i64(1))
        member.send(frames)
        assert protocol.decode_reply(member.reply())[1] is Status.OK
        member.send(frames)
        _, status, payload = protocol.decode_reply(member.reply())
        assert (
            status is Status.ERROR and b"ADD was sent again after a reconnect; it was applied" in payload[0]
        )
        assert master.add("counter", 0) == 1
    finally:
        member.close()
