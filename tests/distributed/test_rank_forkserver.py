"""The test helpers' fork server (``tests/rank_forkserver.py``): a forked rank must be what a
fresh one is (its environment, its own seeds, output kept when killed) and the fallback to
a fresh process must happen whenever the environment asks for more than the job's variables."""

import os
import signal
import sys

import pytest

from dist_helpers import run_ranks


def _where(rank: int, world: int) -> dict:
    import disttorch

    with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
        parent = f.read().replace(b"\0", b" ").decode()
    return {
        "parent_is_server": "rank_forkserver.serve()" in parent,
        "env": {k: os.environ.get(k) for k in ("RANK", "WORLD_SIZE", "MASTER_PORT", "EXTRA")},
        "seed": disttorch.initial_seed(),
        "stdout_buffered": not sys.stdout.write_through,
        "stdin": os.readlink("/proc/self/fd/0"),
    }


@pytest.mark.timeout(60)
def test_a_forked_rank_has_its_own_environment_and_seeds():
    outs = run_ranks(_where, 3)
    assert all(o["parent_is_server"] for o in outs)
    assert [o["env"]["RANK"] for o in outs] == ["0", "1", "2"]
    assert {o["env"]["WORLD_SIZE"] for o in outs} == {"3"} and len(
        {o["env"]["MASTER_PORT"] for o in outs}
    ) == 1
    assert len({o["seed"] for o in outs}) == 3  # each seeded from the OS, as a fresh process is
    assert not any(o["stdout_buffered"] for o in outs) and {o["stdin"] for o in outs} == {os.devnull}


@pytest.mark.timeout(60)
def test_a_rank_asking_for_more_environment_is_a_fresh_process(monkeypatch):
    outs = run_ranks(_where, 2, env={"EXTRA": "1"})
    assert not any(o["parent_is_server"] for o in outs) and outs[0]["env"]["EXTRA"] == "1"
    monkeypatch.setenv("EXTRA", "2")  # the test process's own environment changed: a new server
    outs = run_ranks(_where, 2)
    assert all(o["parent_is_server"] and o["env"]["EXTRA"] == "2" for o in outs)
    monkeypatch.delenv("EXTRA")
    monkeypatch.setenv("DISTTORCH_TESTS_FRESH_RANKS", "1")
    assert not any(o["parent_is_server"] for o in run_ranks(_where, 2))


def _killed_after_printing(rank: int, world: int) -> None:
    print(f"rank {rank} was here")
    if rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    raise ValueError("rank 0 fails")


@pytest.mark.timeout(60)
def test_a_forked_rank_reports_its_exit_output_and_error():
    results = run_ranks(_killed_after_printing, 2, check=False)
    assert isinstance(results[0].error, ValueError) and results[0].returncode == 1
    assert results[1].returncode == -signal.SIGKILL and "died with exit code -9" in str(results[1].error)
    assert [r.stdout for r in results] == ["rank 0 was here\n", "rank 1 was here\n"]


def _sleeps(rank: int, world: int) -> None:
    import time

    time.sleep(60)


@pytest.mark.timeout(60)
def test_a_forked_rank_past_its_timeout_is_killed():
    results = run_ranks(_sleeps, 2, timeout=2, check=False)
    assert all(r.killed and r.returncode == -signal.SIGKILL for r in results)
