"""Fault tolerance end to end: kill -9 and exact resume, dead-rank diagnosis, injected delays and
dropped connections, and a training run that finishes correctly while its ports are fuzzed.

Every test runs tests/fault_scripts/train_ddp.py (DDP on 2 ranks, 3 in the dead-rank test; a checkpoint every step or two)
through ``python -m disttorch.launcher`` and compares rank 0's final parameters, bit for bit, with an
undisturbed run. The counts (faults injected and survived, bad inputs sent, anything lost) are
printed at the end of the module.
"""

import itertools
import json
import random
import re
import socket
import threading
import time
from pathlib import Path

import numpy as np
import psutil
import pytest
import zmq

from disttorch.distributed.base import auth

from launcher_scripts.harness import StderrClock, alive, assert_all_gone, launch, start, wait_for_files

TRAIN = Path(__file__).resolve().parents[1] / "fault_scripts" / "train_ddp.py"
STEPS = 8  # 2 epochs of 4 steps (32 samples, 2 ranks, batch 4)
KILL_STEPS = random.Random(2026).sample(range(2, STEPS), 2)  # a random step for each rank
TALLY = {
    "faults injected": 0,
    "faults survived (run finished, parameters exact)": 0,
    "faults diagnosed (error names the rank)": 0,
    "bad inputs sent": 0,
    "wrong-secret connections refused": 0,
    "runs with different parameters (lost)": 0,
}


@pytest.fixture(scope="module", autouse=True)
def report_counts(request):
    yield
    lines = ["fault tolerance counts:"] + [f"  {k}: {v}" for k, v in TALLY.items()]
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print("\n" + "\n".join(lines))


def bits(path: Path) -> np.ndarray:
    return np.load(path).view(np.uint32)


def same_as(reference: np.ndarray, out: Path) -> bool:
    same = np.array_equal(reference, bits(out / "params.npy"))
    TALLY["runs with different parameters (lost)"] += not same
    return same


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> np.ndarray:
    """The final parameters of an undisturbed run."""
    out = tmp_path_factory.mktemp("reference")
    result = launch("--nproc", 2, TRAIN, out, timeout=60)
    assert result.returncode == 0, result.stderr
    return bits(out / "params.npy")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("rank, every", [(0, 1), (1, 2)])
def test_kill_9_each_rank_then_restart_resumes_exactly(tmp_path, reference, rank, every):
    step = KILL_STEPS[rank]
    print(f"killing rank {rank} with SIGKILL at step {step} (checkpoint every {every})")
    spec = f"kill:rank={rank}:at=step:{step}"
    result = launch(
        "--nproc",
        2,
        "--max-restarts",
        1,
        "--inject-fault",
        spec,
        TRAIN,
        tmp_path,
        "--every",
        every,
        timeout=60,
    )
    TALLY["faults injected"] += 1
    assert result.returncode == 0, result.stderr
    assert f"injected fault '{spec}'" in result.stderr and "exit       : signal SIGKILL (9)" in result.stderr
    assert "restarting the worker group: restart 1 of 1" in result.stderr
    for r in range(2):  # both ranks resumed from the last checkpoint before the killed step
        resumed = json.loads((tmp_path / f"resumed_rank{r}_attempt1.json").read_text())
        assert resumed["global_step"] == (step - 1) // every * every, resumed
        assert (resumed["epoch"], resumed["step"]) == divmod(resumed["global_step"], STEPS // 2), resumed
    assert same_as(reference, tmp_path), "the resumed run ended with other parameters"
    TALLY["faults survived (run finished, parameters exact)"] += 1


@pytest.mark.timeout(60)
def test_without_restarts_survivors_name_the_dead_rank_and_nothing_is_left(tmp_path):
    proc = start(
        "--nproc",
        3,
        "--stop-delay",
        2,
        "--inject-fault",
        "kill:rank=1:at=step:5",
        TRAIN,
        tmp_path,
        "--sleep",
        0.05,
    )
    clock = StderrClock(proc.stderr)
    clock.start()
    try:
        proc.wait(timeout=40)
    finally:
        if proc.poll() is None:
            proc.kill()
    ended = time.time()
    clock.join(timeout=5)
    proc.stdout.close()
    TALLY["faults injected"] += 1
    err = clock.text()
    killed = clock.first("injected fault 'kill:rank=1:at=step:5'")
    assert proc.returncode != 0, err
    assert ended - killed < 10, f"the launcher exited {ended - killed:.1f} s after the kill"
    for survivor in (0, 2):
        error = json.loads((tmp_path / f"error_rank{survivor}_attempt0.json").read_text())
        assert error["type"] == "PeerDiedError" and "rank 1 died" in error["message"], error
        assert error["time"] - killed < 5, (
            f"rank {survivor} raised {error['time'] - killed:.1f} s after the kill"
        )
        print(f"rank {survivor} raised {error['time'] - killed:.2f} s after the kill")
    print(f"the launcher exited {ended - killed:.2f} s after the kill")
    assert "rank 1 was the first to fail" in err, err
    # one line each, naming the dead rank: a survivor still exiting after --stop-delay (a loaded
    # machine) is stopped then, and its line still says what it raised
    ended_how = r"(exit code 1|signal SIG[A-Z]+ \(\d+\))(, stopped by the launcher as it exited)?"
    for survivor in (0, 2):
        assert re.search(
            rf"rank {survivor} +\(node 0, pid \d+\): failed, {ended_how}: PeerDiedError: .*rank 1 died", err
        ), err
    TALLY["faults diagnosed (error names the rank)"] += 1
    pids = [int(p.read_text()) for p in tmp_path.glob("pid_*")]
    assert len(pids) == 3
    assert_all_gone(pids)
    assert not (tmp_path / "params.npy").exists()


@pytest.mark.timeout(60)
def test_delay_is_named_in_a_stall_warning_and_the_run_still_ends_exactly(tmp_path, reference):
    result = launch(
        "--nproc",
        2,
        "--inject-fault",
        "delay:rank=1:seconds=3:at=step:4",
        TRAIN,
        tmp_path,
        env={"DISTTORCH_STALL_WARNING": "1"},
        timeout=60,
    )
    TALLY["faults injected"] += 1
    assert result.returncode == 0, result.stderr
    warnings = [
        line for line in result.stderr.splitlines() if line.startswith("[rank0]") and "has waited" in line
    ]
    assert warnings, result.stderr
    assert "waiting for rank 1" in warnings[0] and "on rank 0 has waited 1 s" in warnings[0], warnings[0]
    TALLY["faults diagnosed (error names the rank)"] += 1
    assert same_as(reference, tmp_path)
    TALLY["faults survived (run finished, parameters exact)"] += 1


@pytest.mark.timeout(60)
def test_dropped_connections_are_named_on_both_sides(tmp_path):
    result = launch("--nproc", 2, "--inject-fault", "drop:rank=1:at=step:4", TRAIN, tmp_path, timeout=60)
    TALLY["faults injected"] += 1
    assert result.returncode != 0
    assert "injected fault 'drop:rank=1:at=step:4'" in result.stderr
    rank0 = json.loads((tmp_path / "error_rank0_attempt0.json").read_text())
    rank1 = json.loads((tmp_path / "error_rank1_attempt0.json").read_text())
    assert rank0["type"] == "PeerDiedError" and "rank 1 died" in rank0["message"], rank0
    assert rank1["type"] == "DistNetworkError" and "closed its connections" in rank1["message"], rank1
    TALLY["faults diagnosed (error names the rank)"] += 1


# ---------------------------------------------------------------------------- fuzzing
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def greeting(mechanism: bytes) -> bytes:
    """A ZMTP 3.0 greeting (64 bytes): signature, version 3.0, mechanism, as-server 0, filler."""
    return b"\xff" + bytes(8) + b"\x7f" + b"\x03\x00" + mechanism.ljust(20, b"\0") + b"\0" + bytes(31)


class Fuzzer(threading.Thread):
    """Sends garbage to every port in ``ports`` until stopped; counts what it sent.

    Once ``quota`` bad inputs are sent it creates ``release`` (the training run waits for it
    half-way through), so thousands arrive mid-training however busy the machine is.
    """

    def __init__(self, ports: list, quota: int, release: Path) -> None:
        super().__init__(daemon=True)
        self.quota, self.release = quota, release
        self.ports, self.sent, self.refused, self.accepted = ports, 0, 0, 0
        self.delivered = dict.fromkeys(ports, 0)  # raw connections accepted and written, per port
        self.stop = threading.Event()
        self.error: BaseException | None = None  # what ended the thread early, if anything
        self.rng = random.Random(42)

    def blobs(self) -> list:
        rng = self.rng
        g = greeting(rng.choice([b"PLAIN", b"CURVE", b"NULL", b"BOGUS"]))
        return [
            rng.randbytes(rng.randint(1, 512)),  # random bytes
            g[: rng.randint(1, 63)],  # truncated greeting
            g + b"\x06\x00\x00\x01\x00\x00\x00\x00\x00" + rng.randbytes(64),  # 1 TB long frame
            g + b"\x04\x05READY" + rng.randbytes(32),  # lying command
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        ]

    def raw(self, port: int) -> None:
        for blob in self.blobs():
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(blob)
                self.sent += 1
                self.delivered[port] += 1
            except OSError:
                pass

    def wrong_secret(self, ctx: zmq.Context, port: int, watch: bool) -> None:
        s = ctx.socket(zmq.DEALER)
        auth.configure_client(s, b"not the job secret")
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.ROUTING_ID, b"disttorch/0/0")
        mon = auth.monitor_socket(s, zmq.EVENT_ALL) if watch else None
        s.connect(f"tcp://127.0.0.1:{port}")
        for _ in range(3):
            try:
                s.send_multipart([self.rng.randbytes(40), self.rng.randbytes(64)], zmq.NOBLOCK)
                self.sent += 1
            except zmq.Again:  # no pipe yet (handshake under way, or refused): nothing was queued
                pass
        if mon is not None:
            from zmq.utils.monitor import parse_monitor_message

            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                if mon.poll(100):
                    event = parse_monitor_message(mon.recv_multipart())["event"]
                    if event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                        self.accepted += 1
                        break
                    if event in (
                        zmq.EVENT_HANDSHAKE_FAILED_AUTH,
                        zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL,
                        zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL,
                        zmq.EVENT_DISCONNECTED,
                    ):
                        self.refused += 1
                        break
            s.disable_monitor()
            mon.close(linger=0)
        s.close(linger=0)

    def run(self) -> None:
        ctx = zmq.Context()
        try:
            for port in self.ports:  # first, one watched wrong-secret connection per port
                self.wrong_secret(ctx, port, watch=True)
            for rounds in itertools.count(1):
                if self.stop.is_set():
                    break
                for port in self.ports:
                    self.raw(port)
                    self.wrong_secret(ctx, port, watch=False)
                if self.sent >= self.quota and not self.release.exists():
                    self.release.touch()
                if rounds % CONTEXT_ROUNDS == 0:
                    # a closed socket holds its slot until libzmq's reaper thread destroys it: a
                    # starved reaper would let them pile up past the context's 1023 sockets
                    # (EMFILE); term() waits until every one is destroyed
                    ctx.term()
                    ctx = zmq.Context()
        except BaseException as e:  # noqa: BLE001 - reported by the test, not lost in the thread
            self.error = e
            self.release.touch()  # let the job finish instead of waiting for a quota never reached
        finally:
            ctx.term()


QUOTA = 3000  # bad inputs sent before the training run may go past its middle step
CONTEXT_ROUNDS = 50  # rounds of the fuzzer's wrong-secret sockets per ZeroMQ context


def listening(pid: int) -> set:
    """The (address, port) pairs process ``pid`` listens on."""
    return {
        (c.laddr.ip, c.laddr.port)
        for c in psutil.Process(pid).net_connections(kind="tcp")
        if c.status == psutil.CONN_LISTEN
    }


@pytest.mark.timeout(90)
def test_training_survives_fuzzed_store_and_peer_ports(tmp_path, reference):
    master = free_port()
    release = tmp_path / "release"
    proc = start(
        "--nproc",
        2,
        "--master-port",
        master,
        TRAIN,
        tmp_path,
        "--sleep",
        0.1,
        "--hold-at",
        STEPS // 2,
        "--hold-file",
        release,
        env={"DISTTORCH_SAME_HOST_TRANSPORT": "tcp"},
    )
    fuzzer = None
    try:
        pid_files = wait_for_files(tmp_path, "pid_rank*", 2, timeout=30)
        pids = [int(p.read_text()) for p in pid_files]
        deadline = time.monotonic() + 20
        sockets: set = set()
        peer_ports: set = set()
        while len(peer_ports) < 2 and time.monotonic() < deadline and proc.poll() is None:
            sockets = set().union(*(listening(p) for p in alive(pids)))
            peer_ports = {port for _, port in sockets} - {master}
            time.sleep(0.05)
        assert len(peer_ports) >= 2, f"found the peer ports {peer_ports} of workers {pids}"
        assert {ip for ip, _ in sockets} == {"127.0.0.1"}, f"a single-node job listens on {sockets}"
        # the baseline once the ranks trained a step and saved it: their own warm-up (imports,
        # buffers, the first checkpoint: about 140 MiB each) is not the fuzzer's doing
        wait_for_files(tmp_path / "ckpt", "latest", 1, timeout=30)
        rss_before = sum(psutil.Process(p).memory_info().rss for p in pids)
        fuzzer = Fuzzer([master, *sorted(peer_ports)], quota=QUOTA, release=release)
        fuzzer.start()
        rss_peak = rss_before
        while proc.poll() is None:
            try:
                rss_peak = max(rss_peak, sum(psutil.Process(p).memory_info().rss for p in pids))
            except psutil.NoSuchProcess:
                pass
            time.sleep(0.1)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if fuzzer is not None:
            fuzzer.stop.set()
            fuzzer.join(timeout=10)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    TALLY["bad inputs sent"] += fuzzer.sent
    TALLY["wrong-secret connections refused"] += fuzzer.refused
    print(
        f"fuzzed ports {fuzzer.ports}: {fuzzer.sent} bad inputs sent (raw per port {fuzzer.delivered}), wrong secret refused "
        f"{fuzzer.refused}, accepted {fuzzer.accepted}; worker memory {rss_before >> 20} -> "
        f"peak {rss_peak >> 20} MiB"
    )
    assert fuzzer.error is None, f"the fuzzer failed: {fuzzer.error!r}"
    assert proc.returncode == 0, stderr
    assert fuzzer.accepted == 0 and fuzzer.refused == len(fuzzer.ports)
    assert all(fuzzer.delivered.values()), f"a port took no raw bytes: {fuzzer.delivered}"
    assert fuzzer.sent >= QUOTA, f"only {fuzzer.sent} bad inputs were sent while the job ran"
    assert rss_peak - rss_before < 100 << 20, f"worker memory grew by {(rss_peak - rss_before) >> 20} MiB"
    assert same_as(reference, tmp_path), "the fuzzed run ended with other parameters"
