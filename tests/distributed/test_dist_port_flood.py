"""Ports that outsiders cannot hurt: before authenticating, connections can make a rank hold
only a small fixed amount of memory, are dropped after a few seconds, and a flood of idle ones
leaves the job training and checkpointing."""

from __future__ import annotations

import os
import re
import resource
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import psutil
import pytest

from dist_helpers import free_port

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(HERE, "scripts", "steady_rank.py")


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen]]:
    """The test's ranks: those still running when it ends (it failed midway) are killed."""
    started: list[subprocess.Popen] = []
    yield started
    for p in started:
        p.kill()
        p.communicate()


def _start_job(duration: float, out_dir: str, procs: list[subprocess.Popen]) -> dict:
    port, secret = free_port(), os.urandom(32).hex()
    for rank in range(2):
        env = dict(
            os.environ,
            PYTHONPATH=REPO,
            RANK=str(rank),
            WORLD_SIZE="2",
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
            DISTTORCH_JOB_SECRET=secret,
            DISTTORCH_TIMEOUT="120",
        )
        procs.append(
            subprocess.Popen(
                [sys.executable, SCRIPT, str(duration), out_dir],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    line = procs[0].stdout.readline()
    m = re.match(r"READY 0 (\d+) (\d+) tcp://([\d.]+):(\d+)", line)
    assert m, line + procs[0].stderr.read()
    return {"pid": int(m.group(1)), "store": int(m.group(2)), "peer": int(m.group(4))}


def _finish(procs: list[subprocess.Popen]) -> list[tuple[int, str, str]]:
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        out.append((p.returncode, stdout, stderr))
    return out


def _greeting(mechanism: bytes) -> bytes:
    """A ZMTP 3.0 greeting (64 bytes) as a client offering ``mechanism``."""
    return b"\xff" + b"\0" * 8 + b"\x7f" + bytes([3, 0]) + mechanism.ljust(20, b"\0") + b"\0" + b"\0" * 31


def _flood(port: int, mechanism: bytes, announced: int, sent: list[int]) -> None:
    """Announce a ``announced``-byte command frame before any handshake and stream zeros."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(_greeting(mechanism))
            s.sendall(b"\x06" + struct.pack(">Q", announced))
            block = b"\0" * (1 << 20)
            total = 0
            while total < announced:
                s.sendall(block)
                total += len(block)
    except OSError:
        total = -1  # the rank dropped the connection: what we want
    sent.append(total)


@pytest.mark.timeout(180)
def test_large_frames_before_authentication_do_not_raise_a_ranks_memory(tmp_path, procs):
    where = _start_job(14.0, str(tmp_path), procs)
    rank0 = psutil.Process(where["pid"])
    time.sleep(1.0)
    baseline = rank0.memory_info().rss
    peak, sent, threads = baseline, [], []
    for i in range(8):  # 8 connections x 256 MiB frames: 4 to the peer port, 4 to the store
        port, mechanism = (where["peer"], b"PLAIN") if i % 2 == 0 else (where["store"], b"CURVE")
        threads.append(threading.Thread(target=_flood, args=(port, mechanism, 256 << 20, sent)))
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        peak = max(peak, rank0.memory_info().rss)
        time.sleep(0.02)
    for _ in range(20):
        peak = max(peak, rank0.memory_info().rss)
        time.sleep(0.05)
    results = _finish(procs)
    for code, stdout, stderr in results:
        assert code == 0, stderr[-3000:]
        assert "DONE" in stdout
    assert (peak - baseline) / 2**20 < 64, f"rank 0 grew by {(peak - baseline) / 2**20:.0f} MiB"
    assert all(total < (256 << 20) for total in sent), sent  # every flood was cut off


def _was_dropped(s: socket.socket) -> bool:
    """Whether the rank closed this connection (after its greeting, which is read and ignored)."""
    s.settimeout(0.0)
    try:
        while True:
            if s.recv(4096) == b"":
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        s.close()


@pytest.mark.timeout(180)
def test_two_thousand_idle_connections_leave_the_job_training_and_checkpointing(tmp_path, procs):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2200:
        pytest.skip(f"this machine allows only {hard} open files per process")
    resource.setrlimit(
        resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096) if hard != resource.RLIM_INFINITY else 4096), hard)
    )
    where = _start_job(16.0, str(tmp_path), procs)
    rank0 = psutil.Process(where["pid"])
    time.sleep(1.0)
    idle = []
    cpu_before = sum(rank0.cpu_times()[:2])
    started = time.monotonic()
    for i in range(2000):
        port = where["peer"] if i % 2 == 0 else where["store"]
        try:
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        except OSError:
            pass
    time.sleep(6.0)  # longer than the handshake limit: they have been dropped meanwhile
    dropped = sum(_was_dropped(s) for s in idle)
    busy = (sum(rank0.cpu_times()[:2]) - cpu_before) / (time.monotonic() - started)
    results = _finish(procs)
    for code, stdout, stderr in results:
        assert code == 0, stderr[-3000:]
        steps = int(re.search(r"DONE \d (\d+)", stdout).group(1))
        assert steps > 20, stdout
    assert sorted(os.listdir(tmp_path)) == ["ckpt-r0.bin", "ckpt-r1.bin"]
    assert len(idle) >= 1900, f"only {len(idle)} connections were accepted"
    assert dropped >= 0.9 * len(idle), (
        f"only {dropped} of {len(idle)} unauthenticated connections were dropped"
    )
    assert busy < 0.9, f"rank 0 used {busy:.0%} of a core while idle connections were open"
