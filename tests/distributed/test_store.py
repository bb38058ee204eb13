"""Tests of the rendezvous stores: TCPStore, FileStore, PrefixStore, and the job-secret authentication."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
import zmq

from disttorch.distributed.base import auth
from disttorch.distributed.store import (
    AuthenticationError,
    DistNetworkError,
    DistStoreError,
    FileStore,
    HashStore,
    PrefixStore,
    TCPStore,
    protocol,
    tcp_server,
    tcp_store,
)

REPO = Path(__file__).resolve().parents[2]
SECRET = "5ec7e7" * 6


@pytest.fixture(autouse=True)
def _no_inherited_job_secret(monkeypatch):
    """Tests choose their secrets themselves; ignore any the calling shell exported."""
    monkeypatch.delenv("DISTTORCH_JOB_SECRET", raising=False)
    monkeypatch.delenv("DISTTORCH_ENCRYPT", raising=False)


def run_python(code: str, n: int = 1, env: dict[str, str] | None = None, timeout: float = 30) -> list[str]:
    """Run ``code`` in ``n`` fresh interpreters (``WORKER`` = 0..n-1 in their env); return their stdouts.

    Fails the test if any process exits non-zero or outlives ``timeout``.
    """
    base = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(code)],
            env={**base, "WORKER": str(i)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(n)
    ]
    outputs = []
    deadline = time.monotonic() + timeout
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
            assert proc.returncode == 0, f"worker failed with {proc.returncode}:\n{err}"
            outputs.append(out)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return outputs


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- fixtures


class _TcpPair:
    """A master store and a separate client store of it; the client is the store under test."""

    def __init__(self, timeout: timedelta) -> None:
        self.master = TCPStore("127.0.0.1", 0, is_master=True, timeout=timeout, secret=SECRET)
        self.client = TCPStore("127.0.0.1", self.master.port, timeout=timeout, secret=SECRET)

    def close(self) -> None:
        self.client.close()
        self.master.close()


@pytest.fixture(params=["tcp", "file", "hash", "prefix-tcp", "prefix-file"])
def store(request, tmp_path):
    """Each kind of store, with a 5 s timeout; yields (store under test, a second handle on the same data)."""
    timeout = timedelta(seconds=5)
    if request.param.endswith("tcp"):
        pair = _TcpPair(timeout)
        first, second, cleanup = pair.client, pair.master, pair.close
    elif request.param == "hash":
        first = second = HashStore(timeout)
        cleanup = first.close
    else:
        path = tmp_path / "store"
        first, second = FileStore(str(path), timeout=timeout), FileStore(str(path), timeout=timeout)

        def cleanup():
            first.close()
            second.close()

    if request.param.startswith("prefix"):
        first, second = PrefixStore("job", first), PrefixStore("job", second)
    yield first, second
    cleanup()


# ---------------------------------------------------------------- the Store API on every store


def test_set_get_str_and_bytes(store):
    s, other = store
    s.set("key", "value")
    s.set("bin", b"\x00\xff\x01")
    assert other.get("key") == b"value"
    assert other.get("bin") == b"\x00\xff\x01"
    s.set("key", b"")  # overwrite with an empty value
    assert other.get("key") == b""


def test_get_waits_until_key_is_set(store):
    s, other = store
    timer = threading.Timer(0.3, other.set, args=("late", "arrived"))
    start = time.monotonic()
    timer.start()
    assert s.get("late") == b"arrived"
    assert time.monotonic() - start >= 0.25
    timer.join()


def test_get_timeout_names_the_key(store):
    s, _ = store
    s.set_timeout(timedelta(seconds=0.3))
    assert s.timeout == timedelta(seconds=0.3)
    start = time.monotonic()
    with pytest.raises(
        DistStoreError, match=r"get timed out after 0\.3 s waiting for key\(s\) '.*never_set'"
    ):
        s.get("never_set")
    assert 0.25 <= time.monotonic() - start < 3


def test_add_counts_and_is_readable_as_decimal(store):
    s, other = store
    assert s.add("counter", 5) == 5
    assert other.add("counter", -2) == 3
    assert s.get("counter") == b"3"
    s.set("text", "not a number")
    with pytest.raises((ValueError, DistStoreError), match="integer"):
        s.add("text", 1)


def test_append_check_and_wait(store):
    s, other = store
    s.append("log", "a")
    other.append("log", b"bc")
    assert s.get("log") == b"abc"
    assert s.check(["log"]) is True
    assert s.check(["log", "absent"]) is False
    threading.Timer(0.2, other.set, args=("w2", "x")).start()
    s.wait(["log", "w2"])  # returns once both exist
    with pytest.raises(
        DistStoreError, match=r"wait timed out after 0\.2 s waiting for key\(s\) '.*absent'"
    ) as err:
        s.wait(["log", "absent"], timedelta(seconds=0.2))
    assert "log'" not in str(err.value)  # only the missing key is named


def test_compare_set_follows_torch_rules(store):
    s, other = store
    assert s.compare_set("cs", "", "first") == b"first"  # absent + empty expected: set
    assert other.get("cs") == b"first"
    assert s.compare_set("cs", "wrong", "second") == b"first"  # mismatch: current value
    assert s.compare_set("cs", "first", "second") == b"second"
    assert other.get("cs") == b"second"
    assert s.compare_set("absent", "expected", "desired") == b"expected"  # absent, not set
    assert not s.check(["absent"])


def test_compare_set_wakes_a_waiting_get(store):
    s, other = store
    threading.Timer(0.2, other.compare_set, args=("cas_key", "", "won")).start()
    assert s.get("cas_key") == b"won"


def test_delete_key_and_num_keys(store):
    s, other = store
    base = s.num_keys()
    s.set("a", "1")
    s.set("b", "2")
    s.add("c", 1)
    assert other.num_keys() == base + 3
    assert s.delete_key("a") is True
    assert s.delete_key("a") is False
    assert other.num_keys() == base + 2
    assert not other.check(["a"])


def test_multi_set_and_multi_get(store):
    s, other = store
    s.multi_set(["m1", "m2"], ["v1", b"v2"])
    assert other.multi_get(["m2", "m1"]) == [b"v2", b"v1"]
    with pytest.raises(ValueError, match="2 keys but 1 values"):
        s.multi_set(["x", "y"], ["only one"])


def test_bad_argument_types_are_refused(store):
    s, _ = store
    with pytest.raises(TypeError, match="store values must be bytes or str, got int"):
        s.set("k", 3)
    with pytest.raises(TypeError, match="store keys must be str or bytes, got int"):
        s.set(3, "v")
    with pytest.raises(TypeError, match="timedelta"):
        s.set_timeout(5)


# ---------------------------------------------------------------- TCPStore specifics


@pytest.mark.timeout(30)
def test_tcp_master_picks_a_port_and_listens_on_loopback_only():
    psutil = pytest.importorskip("psutil")
    with TCPStore("127.0.0.1", 0, is_master=True, timeout=timedelta(seconds=5)) as master:
        assert 0 < master.port < 65536
        listening = [
            c.laddr
            for c in psutil.Process().net_connections("tcp")
            if c.status == psutil.CONN_LISTEN and c.laddr.port == master.port
        ]
        assert [addr.ip for addr in listening] == ["127.0.0.1"]


@pytest.mark.timeout(30)
def test_tcp_master_on_a_busy_port_says_so():
    with TCPStore("127.0.0.1", 0, is_master=True, timeout=timedelta(seconds=5)) as first:
        with pytest.raises(
            DistNetworkError, match=f"cannot listen on 127.0.0.1:{first.port}: Address already in use"
        ):
            TCPStore("127.0.0.1", first.port, is_master=True, timeout=timedelta(seconds=5))


@pytest.mark.timeout(30)
def test_tcp_client_without_server_times_out_naming_the_address():
    port = free_port()
    start = time.monotonic()
    with pytest.raises(
        DistNetworkError, match=f"could not reach the store at 127.0.0.1:{port} within 0.5 s"
    ) as info:
        TCPStore("127.0.0.1", port, timeout=timedelta(seconds=0.5))
    assert "node 0's launcher" in str(info.value) and "--master-port" in str(info.value)
    assert time.monotonic() - start < 3


@pytest.mark.timeout(30)
def test_a_client_waiting_for_the_store_says_so_while_it_waits(monkeypatch, caplog):
    from disttorch.distributed.store import tcp_store

    monkeypatch.setattr(tcp_store, "CONNECT_NOTICE_S", 0.4)
    port = free_port()
    with pytest.raises(DistNetworkError, match="could not reach the store"):
        TCPStore("127.0.0.1", port, timeout=timedelta(seconds=1))
    notices = [r.getMessage() for r in caplog.records if "still trying to reach" in r.getMessage()]
    assert 1 <= len(notices) <= 2, notices
    assert notices[0].startswith(f"still trying to reach the store at 127.0.0.1:{port} after ")
    assert "(giving up after 1 s): is its host (rank 0, or node 0's launcher) running" in notices[0]


@pytest.mark.timeout(30)
def test_tcp_client_retries_until_the_master_starts():
    port = free_port()
    result: dict[str, bytes] = {}

    def client() -> None:
        with TCPStore("127.0.0.1", port, timeout=timedelta(seconds=10)) as c:
            result["v"] = c.get("hello")

    thread = threading.Thread(target=client)
    thread.start()
    time.sleep(0.5)  # the client is already retrying
    with TCPStore("127.0.0.1", port, is_master=True, timeout=timedelta(seconds=10)) as master:
        master.set("hello", "world")
        thread.join(timeout=10)
    assert result["v"] == b"world"


@pytest.mark.timeout(30)
def test_tcp_master_waits_for_workers():
    port = free_port()
    threading.Timer(0.4, lambda: TCPStore("127.0.0.1", port, world_size=2).close()).start()
    start = time.monotonic()
    with TCPStore("127.0.0.1", port, world_size=2, is_master=True, timeout=timedelta(seconds=10)):
        assert time.monotonic() - start >= 0.3
    with pytest.raises(
        DistStoreError, match=r"waited 0.3 s for 3 processes to connect, but only 1 of 3 checked in"
    ):
        TCPStore("127.0.0.1", 0, world_size=3, is_master=True, timeout=timedelta(seconds=0.3))


@pytest.mark.timeout(30)
def test_tcp_close_stops_the_server_and_frees_the_port():
    master = TCPStore("127.0.0.1", 0, is_master=True, timeout=timedelta(seconds=5))
    port = master.port
    master.close()
    master.close()  # idempotent
    with pytest.raises(DistStoreError, match="closed TCPStore"):
        master.set("k", "v")
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))  # the port is free again


@pytest.mark.timeout(30)
def test_tcp_close_interrupts_a_blocked_get():
    pair = _TcpPair(timedelta(seconds=60))
    errors: list[BaseException] = []

    def blocked_get() -> None:
        try:
            pair.client.get("never")
        except BaseException as error:  # checked below
            errors.append(error)

    thread = threading.Thread(target=blocked_get)
    thread.start()
    time.sleep(0.3)
    start = time.monotonic()
    pair.close()
    thread.join(timeout=5)
    assert time.monotonic() - start < 2
    assert len(errors) == 1 and isinstance(errors[0], DistStoreError)
    assert "was closed during GET" in str(errors[0])


@pytest.mark.timeout(30)
def test_tcp_late_reply_to_an_abandoned_get_is_discarded():
    pair = _TcpPair(timedelta(seconds=0.2))
    try:
        with pytest.raises(DistStoreError, match="'slow'"):
            pair.client.get("slow")
        pair.master.set("slow", "now")
        pair.client.set("other", "x")
        assert pair.client.get("slow") == b"now"
        assert pair.client.add("n", 7) == 7
    finally:
        pair.close()


@pytest.mark.timeout(30)
def test_tcp_client_shared_by_threads():
    pair = _TcpPair(timedelta(seconds=10))
    try:
        threads = [
            threading.Thread(target=lambda: [pair.client.add("t", 1) for _ in range(50)]) for _ in range(8)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert pair.master.get("t") == b"400"
    finally:
        pair.close()


@pytest.mark.timeout(30)
def test_tcp_value_size_limits():
    pair = _TcpPair(timedelta(seconds=10))
    try:
        big = os.urandom(1 << 20)
        pair.client.set("big", big)
        assert pair.master.get("big") == big
        with pytest.raises(ValueError, match=f"at most {protocol.MAX_VALUE_BYTES} bytes"):
            pair.client.set("huge", b"\0" * (protocol.MAX_VALUE_BYTES + 1))
        with pytest.raises(ValueError, match="keys must be 1 to 4096 bytes, got 0"):
            pair.client.set("", "v")
    finally:
        pair.close()


@pytest.mark.timeout(60)
def test_tcp_concurrent_adds_from_many_processes_are_exact():
    port = free_port()
    code = f"""
        import os
        from datetime import timedelta
        from disttorch.distributed.store import TCPStore
        rank = int(os.environ["WORKER"])
        store = TCPStore("127.0.0.1", {port}, world_size=4, is_master=rank == 0, timeout=timedelta(seconds=20))
        for _ in range(100):
            store.add("total", 1)
        store.set(f"done/{{rank}}", str(rank))
        store.wait([f"done/{{r}}" for r in range(4)])
        print(store.get("total").decode())
        store.set(f"exit/{{rank}}", "")
        if rank == 0:  # the master outlives every client's last request
            store.wait([f"exit/{{r}}" for r in range(4)])
        store.close()
    """
    outputs = run_python(code, n=4, env={"DISTTORCH_JOB_SECRET": SECRET}, timeout=50)
    assert [o.strip() for o in outputs] == ["400"] * 4


@pytest.mark.timeout(60)
def test_tcp_get_waits_across_processes():
    port = free_port()
    code = f"""
        import os, time
        from datetime import timedelta
        from disttorch.distributed.store import TCPStore
        rank = int(os.environ["WORKER"])
        store = TCPStore("127.0.0.1", {port}, world_size=2, is_master=rank == 0, timeout=timedelta(seconds=20))
        if rank == 1:
            time.sleep(0.5)
            store.set("from1", "hello from 1")
            print(store.get("from0").decode())
        else:
            print(store.get("from1").decode())
            store.set("from0", "hello from 0")
            store.wait(["bye"])
        store.set("bye", "")
        store.close()
    """
    outputs = run_python(code, n=2, timeout=50)
    assert [o.strip() for o in outputs] == ["hello from 1", "hello from 0"]


@pytest.mark.timeout(60)
def test_tcp_client_notices_a_dead_master_within_seconds(monkeypatch):
    monkeypatch.setattr(tcp_store, "DISCONNECT_GRACE_S", 1.0)  # 5 s by default
    code = """
        import sys, time
        from disttorch.distributed.store import TCPStore
        store = TCPStore("127.0.0.1", 0, is_master=True)
        print(store.port, flush=True)
        time.sleep(60)
    """
    master = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        port = int(master.stdout.readline())
        client = TCPStore("127.0.0.1", port, timeout=timedelta(seconds=60))
        client.set("before", "death")
        threading.Timer(0.5, master.kill).start()
        start = time.monotonic()
        with pytest.raises(
            DistNetworkError, match=f"lost the connection to the store at 127.0.0.1:{port} during GET"
        ):
            client.get("never")
        assert time.monotonic() - start < 4
        client.close()
    finally:
        master.kill()
        master.wait()


# ---------------------------------------------------------------- FileStore specifics


@pytest.mark.timeout(60)
def test_file_store_concurrent_adds_from_processes_and_cleanup(tmp_path):
    path = tmp_path / "shared"
    code = f"""
        from disttorch.distributed.store import FileStore
        import os
        rank = int(os.environ["WORKER"])
        store = FileStore({str(path)!r}, world_size=3)
        for _ in range(100):
            store.add("total", 1)
        store.set(f"done/{{rank}}", "")
        store.wait([f"done/{{r}}" for r in range(3)])
        print(store.get("total").decode())
        store.close()
    """
    outputs = run_python(code, n=3, timeout=50)
    assert [o.strip() for o in outputs] == ["300"] * 3
    assert not path.exists()  # the last of world_size users deleted it


def test_file_store_cuts_a_torn_record(tmp_path):
    path = tmp_path / "torn"
    with FileStore(str(path)) as store:
        store.set("good", "value")
    with open(path, "ab") as f:
        f.write(b"S\x00\x00\x00\x05\x00")  # a writer died mid-record
    with FileStore(str(path)) as store:
        assert store.get("good") == b"value"
        store.set("after", "ok")
    with FileStore(str(path)) as store:
        assert store.get("after") == b"ok"
        assert store.num_keys() == 2


def test_file_store_rejects_a_foreign_file_and_extra_users(tmp_path):
    foreign = tmp_path / "foreign"
    foreign.write_bytes(b"hello world")
    with pytest.raises(DistStoreError, match="not a disttorch FileStore log"):
        FileStore(str(foreign))
    path = str(tmp_path / "full")
    first = FileStore(path, world_size=1)
    with pytest.raises(DistStoreError, match="already has 1 users, the world_size 1"):
        FileStore(path, world_size=1)
    first.close()


def test_prefix_store_namespaces_keys():
    pair = _TcpPair(timedelta(seconds=5))
    try:
        a, b = PrefixStore("a", pair.client), PrefixStore("b", pair.client)
        a.set("k", "from a")
        b.set("k", "from b")
        assert pair.master.get("a/k") == b"from a"
        assert pair.master.get("b/k") == b"from b"
        nested = PrefixStore("inner", a)
        nested.set("k", "deep")
        assert pair.master.get("a/inner/k") == b"deep"
        a.set_timeout(timedelta(seconds=2))
        assert pair.client.timeout == timedelta(seconds=2)
    finally:
        pair.close()


# ---------------------------------------------------------------- authentication


@pytest.mark.timeout(30)
def test_wrong_secret_is_refused_and_the_server_keeps_serving():
    with TCPStore("127.0.0.1", 0, is_master=True, timeout=timedelta(seconds=5), secret=SECRET) as master:
        start = time.monotonic()
        with pytest.raises(AuthenticationError, match="job secrets differ"):
            TCPStore("127.0.0.1", master.port, timeout=timedelta(seconds=5), secret="ab" * 16)
        assert time.monotonic() - start < 3  # refused, not timed out
        with pytest.raises(AuthenticationError, match="which has no DISTTORCH_JOB_SECRET"):
            TCPStore("127.0.0.1", master.port, timeout=timedelta(seconds=5), secret=None)
        with TCPStore("127.0.0.1", master.port, timeout=timedelta(seconds=5), secret=SECRET) as good:
            good.set("still", "working")
        assert master.get("still") == b"working"
        assert master.num_keys() == 1


@pytest.mark.timeout(40)
def test_a_wait_for_workers_that_starts_after_a_refusal_fails_fast():
    """The host can be slower than the refused process: its wait for workers starts after the
    refusal's grace has passed, and must still fail fast rather than wait out its timeout."""
    with TCPStore("127.0.0.1", 0, is_master=True, timeout=timedelta(seconds=20), secret=None) as master:
        with pytest.raises(AuthenticationError):
            TCPStore("127.0.0.1", master.port, timeout=timedelta(seconds=5), secret=SECRET)
        time.sleep(tcp_server.AUTH_FAILURE_GRACE + 0.5)
        start = time.monotonic()
        with pytest.raises(AuthenticationError, match="failed to authenticate"):
            master._wait_for_workers(2)
        assert time.monotonic() - start < tcp_server.AUTH_FAILURE_GRACE + 3


@pytest.mark.timeout(40)
def test_a_refusal_before_a_met_wait_for_workers_does_not_shorten_later_waits():
    with TCPStore("127.0.0.1", 0, is_master=True, timeout=timedelta(seconds=20), secret=None) as master:
        with pytest.raises(AuthenticationError):
            TCPStore("127.0.0.1", master.port, timeout=timedelta(seconds=5), secret=SECRET)
        master._wait_for_workers(1)  # met at once: the rendezvous it guarded is complete
        late = threading.Timer(
            tcp_server.AUTH_FAILURE_GRACE + 1.0,
            lambda: TCPStore("127.0.0.1", master.port, timeout=timedelta(seconds=5), secret=None).close(),
        )
        late.start()
        try:
            master._wait_for_workers(2)  # answered when the late process checks in, not refused
        finally:
            late.join()


@pytest.mark.timeout(30)
def test_a_refusal_after_every_worker_joined_fails_no_wait(monkeypatch):
    """Once the job's processes have all joined, a refused handshake is an outsider's: the
    job's waits go on (before, every pending and later get/wait failed with an
    authentication error, so anyone who could reach the port could end a running job)."""
    monkeypatch.setattr(tcp_server, "AUTH_FAILURE_GRACE", 0.2)
    with TCPStore(
        "127.0.0.1",
        0,
        2,
        is_master=True,
        timeout=timedelta(seconds=10),
        wait_for_workers=False,
        secret=SECRET,
    ) as master:
        with TCPStore("127.0.0.1", master.port, 2, timeout=timedelta(seconds=10), secret=SECRET) as client:
            master._wait_for_workers(2)
            with pytest.raises(AuthenticationError):
                TCPStore("127.0.0.1", master.port, timeout=timedelta(seconds=5), secret="ab" * 16)
            late = threading.Timer(0.8, lambda: master.set("late", "value"))
            late.start()
            assert client.get("late") == b"value"  # waited past the grace
            late.join()
            later = threading.Timer(0.1, lambda: master.set("later", "value"))
            later.start()
            assert client.get("later") == b"value"
            later.join()


@pytest.mark.timeout(30)
def test_secret_from_environment_and_encrypted_mode(monkeypatch):
    monkeypatch.setenv("DISTTORCH_JOB_SECRET", SECRET)
    monkeypatch.setenv("DISTTORCH_ENCRYPT", "1")
    with TCPStore("127.0.0.1", 0, is_master=True, timeout=timedelta(seconds=5)) as master:
        with TCPStore("127.0.0.1", master.port, timeout=timedelta(seconds=5)) as client:
            client.set("curve", "ok")
        with pytest.raises(AuthenticationError):
            TCPStore("127.0.0.1", master.port, timeout=timedelta(seconds=5), secret="cd" * 16)
        assert master.get("curve") == b"ok"


def test_resolve_secret_validates(monkeypatch):
    monkeypatch.delenv("DISTTORCH_JOB_SECRET", raising=False)
    assert auth.resolve_secret() is None
    assert auth.resolve_secret("00ff" * 8) == b"\x00\xff" * 8
    monkeypatch.setenv("DISTTORCH_JOB_SECRET", "not hex!")
    with pytest.raises(ValueError, match="DISTTORCH_JOB_SECRET must be a hex string"):
        auth.resolve_secret()
    for short in (b"", "ab", "00" * 15):  # under 128 bits
        with pytest.raises(ValueError, match="at least 128 bits"):
            auth.resolve_secret(short)
    assert len(auth.generate_secret()) == 64
    assert auth.plain_token(b"a") != auth.plain_token(b"b")


def test_without_a_secret_only_loopback_peers_pass():
    _, policy = auth._policy(None, encrypt=False)
    assert policy.accepts([], "127.0.0.1")
    assert policy.accepts([], "::1")
    assert policy.accepts([], "::ffff:127.0.0.1")
    assert not policy.accepts([], "10.1.2.3")
    assert not policy.accepts([], "192.168.0.7")


@pytest.mark.timeout(30)
def test_auth_helpers_protect_any_socket_pair():
    ctx = zmq.Context()
    try:
        server = ctx.socket(zmq.PULL)
        auth.configure_server(server, b"k1")
        port = server.bind_to_random_port("tcp://127.0.0.1")
        good, bad = ctx.socket(zmq.PUSH), ctx.socket(zmq.PUSH)
        auth.configure_client(good, b"k1")
        auth.configure_client(bad, b"k2")
        for sock in (good, bad):
            sock.linger = 0
            sock.connect(f"tcp://127.0.0.1:{port}")
        bad.send(b"intruder", zmq.NOBLOCK) if bad.poll(200, zmq.POLLOUT) else None
        good.send(b"member")
        assert server.poll(5000)
        assert server.recv() == b"member"
        assert not server.poll(300)
        for sock in (server, good, bad):
            sock.close(linger=0)
    finally:
        ctx.term()


@pytest.mark.timeout(60)
def test_a_new_client_waits_out_a_retiring_store_and_joins_the_one_replacing_it():
    """What a rank re-initialising before rank 0 closed its old store sees: turned away while
    the old store retires, then answered by the new store on the same port."""
    old = TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False, secret=SECRET)
    port = old.port
    old.set("from_the_old_store", b"1")
    old.retire()
    joined: list = []

    def join() -> None:
        client = TCPStore("127.0.0.1", port, timeout=timedelta(seconds=30), secret=SECRET)
        joined.append((client, client.check(["from_the_old_store"])))

    thread = threading.Thread(target=join)
    thread.start()
    time.sleep(0.5)
    assert not joined, "a retiring store must turn new clients away"
    old.close()
    new = TCPStore("127.0.0.1", port, is_master=True, wait_for_workers=False, secret=SECRET)
    thread.join(timeout=30)
    client, saw_old_key = joined[0]
    assert not saw_old_key
    client.set("k", b"v")
    assert new.get("k") == b"v"
    client.close()
    new.close()


def test_master_listen_fd_use_libuv_and_multi_tenant_as_pytorch_names_them():
    """``TCPStore(..., master_listen_fd=fd)`` serves on the port of the socket it is handed,
    ``use_libuv`` reads back as ``libuvBackend``, ``multi_tenant=True`` is refused, and
    ``torch._C._DistStoreError`` is the store's error class (the TCPStore tutorial's names)."""
    import disttorch

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = TCPStore("127.0.0.1", port, 1, True, master_listen_fd=listener.detach(), use_libuv=False)
    try:
        assert server.port == port and server.libuvBackend is False
        client = TCPStore("127.0.0.1", port, timeout=timedelta(seconds=5))
        client.set("k", "v")
        assert server.get("k") == b"v" and client.libuvBackend is True
        with pytest.raises(disttorch._C._DistStoreError):
            client.wait(["missing"], timedelta(seconds=0.1))
        client.close()
    finally:
        server.close()
    with pytest.raises(NotImplementedError, match="multi_tenant"):
        TCPStore("127.0.0.1", 0, 1, True, multi_tenant=True)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("secret", [None, "ab" * 32])
def test_the_server_tells_a_client_whose_process_ended_from_one_still_connected(monkeypatch, secret):
    if secret:
        monkeypatch.setenv("DISTTORCH_JOB_SECRET", secret)
    master = TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False)
    code = (
        "import sys; from disttorch.distributed.store import TCPStore\n"
        f"store = TCPStore('127.0.0.1', {master.port})\n"
        "store.set('ready', '1'); print(store.client_id().hex(), flush=True); sys.stdin.read()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-c", code], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        client = bytes.fromhex(child.stdout.readline().strip())
        assert master.gone_for([client, master.client_id(), b"never seen"]) == [None, None, None]
        child.kill()
        child.wait()
        deadline = time.monotonic() + 10
        while (gone := master.gone_for([client])[0]) is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert gone is not None and gone >= 0
        assert master.gone_for([master.client_id()]) == [None]
    finally:
        child.kill()
        child.wait()
        master.close()
    assert HashStore().gone_for([client]) == [None]  # (a store without connections cannot tell)
