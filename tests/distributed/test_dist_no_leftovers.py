"""No ending leaves anything behind: after a normal end, an exception, ``os._exit``, SIGKILL
of a rank, and SIGINT, SIGTERM or SIGKILL of the launcher, the shared-memory rings and ipc
directories are gone and no process of the job is alive. DataLoader workers end with their
parent."""

from __future__ import annotations

import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import psutil
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(HERE, "scripts", "ending.py")


def _job_processes(marker: str) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if marker in " ".join(p.info["cmdline"] or []) and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.Error:
            pass
    return found


def _files_of(pids: set[int], tmp: str) -> list[str]:
    out = []
    for pid in pids:
        out += glob.glob(f"/dev/shm/disttorch-{pid}-*")
    return out + sorted(e for e in os.listdir(tmp) if e.startswith("disttorch-") and "launch" not in e)


def _launch(how: str, tmp: str, marker: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=REPO, TMPDIR=tmp, DISTTORCH_TIMEOUT="60")
    env.pop("DISTTORCH_JOB_SECRET", None)
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "disttorch.launcher",
            "--nproc",
            "2",
            "--stop-grace",
            "3",
            SCRIPT,
            how,
            marker,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _wait_ready(proc: subprocess.Popen, n: int, timeout: float) -> tuple[list[str], dict[int, int]]:
    lines, pids = [], {}
    deadline = time.monotonic() + timeout
    while len(pids) < n and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"READY (\d+) (\d+) (\d+)", line)
        if m:
            pids[int(m.group(1))] = int(m.group(2))
    assert len(pids) == n, "".join(lines)
    return lines, pids


def _gone_within(marker: str, seconds: float) -> list[psutil.Process]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = _job_processes(marker)
        if not alive:
            return []
        time.sleep(0.2)
    return _job_processes(marker)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "ending",
    [
        "normal",
        "exception",
        "exit",
        "kill_rank",
        "launcher_SIGINT",
        "launcher_SIGTERM",
        "launcher_SIGKILL",
        "launcher_SIGKILL_detached",  # the rank's child left its session: still ended
        "guardian_then_launcher_SIGKILL_detached",  # the launcher starts another guardian
    ],
)
def test_no_ending_leaves_files_or_processes(ending):
    tmp = tempfile.mkdtemp(prefix="dt-end-", dir="/tmp")  # short: ipc socket paths must fit 107 bytes
    before = sorted(os.listdir(tmp))
    marker = f"disttorch-ending-{uuid.uuid4().hex}"
    how = ending if ending in ("normal", "exception", "exit") else "wait"
    how += "_detached" if ending.endswith("_detached") else ""
    how += "_tempdir" if ending in ("launcher_SIGINT", "launcher_SIGTERM") else ""  # removed at SIGTERM
    proc = _launch(how, tmp, marker)
    try:
        lines, pids = _wait_ready(proc, 2, 90)
        if ending == "kill_rank":
            os.kill(pids[1], signal.SIGKILL)
        elif ending.startswith("guardian_"):
            (guardian,) = [
                p for p in psutil.Process(proc.pid).children() if "guardian.py" in " ".join(p.cmdline())
            ]
            guardian.kill()
            time.sleep(0.5)
            proc.send_signal(signal.SIGKILL)
        elif ending.startswith("launcher_"):
            proc.send_signal(getattr(signal, ending.split("_")[1]))  # the launcher alone
        proc.wait(60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    rest = proc.stdout.read()
    alive = _gone_within(marker, 10)
    assert not alive, f"still alive: {[p.cmdline() for p in alive]}\n{''.join(lines)}{rest}"
    assert _files_of(set(pids.values()), tmp) == [], "".join(lines) + rest
    assert sorted(os.listdir(tmp)) == before
    shutil.rmtree(tmp)
    assert (proc.returncode == 0) == (ending in ("normal", "exit")), rest


LOADER = """
import os, sys, time
import disttorch, disttorch.multiprocessing  # tensors cross in shared memory
import disttorch.utils.data as data

class Slow(data.Dataset):
    def __len__(self):
        return 10_000
    def __getitem__(self, i):
        time.sleep(0.05)
        return disttorch.tensor(float(i))

it = iter(data.DataLoader(Slow(), batch_size=2, num_workers=2))
for _ in range(3):  # a batch from each worker: each has its temporary directory
    next(it)
import multiprocessing
print("WORKERS", " ".join(str(c.pid) for c in multiprocessing.active_children()), flush=True)
time.sleep(600)
"""


@pytest.mark.timeout(60)
def test_dataloader_workers_end_when_their_parent_is_killed(tmp_path):
    """... removing their temporary directories (multiprocessing's, with a listening socket)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", LOADER],
        env=dict(os.environ, PYTHONPATH=REPO, TMPDIR=str(tmp_path)),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        workers = [int(p) for p in line.split()[1:]]
        assert line.startswith("WORKERS") and len(workers) == 2, line
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(
            psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in workers
        ):
            time.sleep(0.1)
        alive = [
            p for p in workers if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE
        ]
        assert not alive, f"DataLoader workers {alive} outlived their parent"
        assert os.listdir(tmp_path) == []
    finally:
        if proc.poll() is None:
            proc.kill()
