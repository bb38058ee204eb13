"""Ranks that die, freeze or never finish starting while the host's ranks share memory:
every survivor reports the rank and the collective within seconds, and nothing is left
in ``/dev/shm`` or the temporary directory, with or without the launcher."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from disttorch.distributed.wire import shm

from dist_helpers import free_port, rank_env

pytestmark = pytest.mark.skipif(not shm.enabled(), reason="needs memfd on x86-64 Linux")

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = os.path.join(HERE, "scripts", "shm_loop.py")
SURVIVOR_BOUND = 12.0  # product: about 3.5 s; room for a loaded machine


def _start(script: list[str], world: int, ranks: list[int], tmp: str, timeout: str = "120") -> dict:
    port, secret = free_port(), os.urandom(16).hex()
    procs = {}
    for rank in ranks:
        env = rank_env(rank, world, port, secret, {"TMPDIR": tmp, "DISTTORCH_TIMEOUT": timeout})
        procs[rank] = subprocess.Popen(
            [sys.executable, *script], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
    return procs


def _ready(procs: dict, timeout: float) -> dict[int, int]:
    pids, deadline = {}, time.monotonic() + timeout
    for rank, p in procs.items():
        while time.monotonic() < deadline:
            line = p.stdout.readline()
            m = re.search(r"READY (\d+) (\d+)", line)
            if m:
                pids[rank] = int(m.group(2))
                break
            assert line, f"rank {rank} ended before READY"
    assert len(pids) == len(procs), f"only {sorted(pids)} ready"
    return pids


def _end(procs: dict) -> None:
    for p in procs.values():
        if p.poll() is None:
            for sig in (signal.SIGCONT, signal.SIGKILL):
                p.send_signal(sig)
        p.wait()


def _named_after(procs: dict) -> set[str]:
    """Entries of /dev/shm that carry the id of one of ``procs`` (other jobs share it)."""
    marks = [f"-{p.pid}-" for p in procs.values()]
    entries = os.listdir("/dev/shm") if os.path.isdir("/dev/shm") else []
    return {e for e in entries if any(m in e for m in marks)}


@pytest.mark.timeout(180)
@pytest.mark.parametrize("how", ["SIGKILL", "SIGSTOP"])
def test_a_rank_killed_or_frozen_mid_collective_is_named_by_every_survivor(how, tmp_path):
    tmp = str(tmp_path)  # the ranks' TMPDIR: whatever they leave in it shows
    procs = _start([LOOP], 4, [0, 1, 2, 3], tmp)
    try:
        _ready(procs, 120)
        time.sleep(1.0)
        hit_at = time.time()
        procs[2].send_signal(getattr(signal, how))
        outputs = {r: procs[r].communicate(timeout=60)[0] for r in (0, 1, 3)}
    finally:
        _end(procs)
    for rank, text in outputs.items():
        m = re.search(r"FAILED (\S+) PeerDiedError: (.*)", text)
        assert m, f"rank {rank} did not report\n{text}"
        assert float(m.group(1)) - hit_at < SURVIVOR_BOUND, text
        assert "rank 2" in m.group(2) and "all_reduce(float32[1048576], op=SUM)" in m.group(2), m.group(2)
    assert _named_after(procs) == set()
    assert os.listdir(tmp) == []
    os.rmdir(tmp)


SKIP_GROUP = """
import os, sys, time
import disttorch.distributed as dist
dist.init_process_group("gloo")
print(f"READY {dist.get_rank()} {os.getpid()}", flush=True)
if dist.get_rank() == 2:
    time.sleep(600)  # never joins the new group
dist.new_group([0, 1, 2])
"""


@pytest.mark.timeout(150)
@pytest.mark.parametrize("how", ["SIGKILL", "timeout"])
def test_a_group_start_that_fails_leaves_nothing(how, tmp_path):
    """Ranks 0 and 1 make a group with rank 2, which never joins: they are inside the
    group's start (their endpoints published, waiting for rank 2's) when they are killed,
    or when their start times out."""
    tmp = str(tmp_path)  # the ranks' TMPDIR: whatever they leave in it shows
    procs = _start(["-c", SKIP_GROUP], 3, [0, 1, 2], tmp, timeout="10")
    try:
        _ready(procs, 120)
        if how == "SIGKILL":
            time.sleep(4.0)
            assert procs[0].poll() is None and procs[1].poll() is None
            procs[0].kill()
            procs[1].kill()
        codes = [procs[r].wait(90) for r in (0, 1)]
    finally:
        _end(procs)
    assert all(code != 0 for code in codes)
    assert _named_after(procs) == set()
    assert os.listdir(tmp) == []
    os.rmdir(tmp)


def _disagree_at_the_call(rank: int, world: int, kind: str) -> str:
    import numpy as np

    import disttorch.distributed as dist

    dist.init_process_group()
    try:
        if kind == "root":
            dist.broadcast(np.ones(6, np.float32), src=rank)
        else:
            dist.all_reduce(np.ones(5 + rank, np.float32))
    except dist.CollectiveMismatchError as e:
        return f"at the call: {e}"
    return "no error"


@pytest.mark.timeout(90)
@pytest.mark.parametrize("kind", ["root", "size"])
def test_ranks_that_disagree_fail_at_that_very_call_on_every_rank(kind):
    from dist_helpers import run_ranks

    results = run_ranks(_disagree_at_the_call, 3, args=(kind,), timeout=80, env={"DISTTORCH_TIMEOUT": "60"})
    for rank, text in enumerate(results):
        assert text.startswith("at the call: "), (rank, text)
        if kind == "root":
            assert f"root={rank}" in text and "broadcast(float32[6], root=" in text, text
        else:
            assert f"all_reduce(float32[{5 + rank}]" in text, text


def _destroy_after_a_failure(rank: int, world: int) -> str:
    import numpy as np

    import disttorch.distributed as dist

    dist.init_process_group()
    try:
        dist.all_reduce(np.ones(1000 + rank, np.float32))  # fails inside a sync
    except dist.CollectiveMismatchError as e:
        kept = e  # its traceback holds views of the segment
    dist.destroy_process_group()
    return type(kept).__name__


@pytest.mark.timeout(90)
def test_a_group_is_destroyed_while_a_failure_still_holds_views_of_the_segment():
    from dist_helpers import run_ranks

    assert run_ranks(_destroy_after_a_failure, 2, timeout=80) == ["CollectiveMismatchError"] * 2


def _different_algorithms(rank: int, world: int) -> str:
    import os

    import numpy as np

    import disttorch.distributed as dist

    os.environ["DISTTORCH_ALGORITHM"] = "ring" if rank == 0 else "shm"
    dist.init_process_group()
    try:
        dist.all_reduce(np.ones(1000, np.float32))
    except dist.CollectiveMismatchError as e:
        return str(e)
    return "no error"


@pytest.mark.timeout(90)
def test_ranks_that_chose_different_algorithms_fail_within_seconds():
    from dist_helpers import run_ranks

    results = run_ranks(_different_algorithms, 3, timeout=80, check=False, env={"DISTTORCH_TIMEOUT": "60"})
    for r in results:
        assert r.ok and "chose different algorithms" in r.value, r.describe()
        assert r.elapsed < 30, f"rank {r.rank} took {r.elapsed:.0f} s"
