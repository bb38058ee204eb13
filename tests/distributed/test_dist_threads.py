"""Two threads issuing collectives on one group at once would pair up differently on each
rank (wrong sums, no error): the group refuses it at the call, naming both threads, and breaks
on every rank. One thread at a time, even a different one each time, is fine."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from dist_helpers import run_ranks


def two_threads(rank: int, world: int, rounds: int) -> dict:
    import disttorch.distributed as dist

    dist.init_process_group()
    # one thread after the other: allowed
    for name in ("first", "second"):
        t = threading.Thread(target=dist.all_reduce, args=(np.ones(3, np.float32),), name=name)
        t.start()
        t.join()
    errors, wrong = {}, {}

    def loop(value: float) -> None:
        name = threading.current_thread().name
        try:
            for _ in range(rounds):
                x = np.full(64, value, np.float32)
                dist.all_reduce(x)
                if not np.all(x == value * world):
                    wrong[name] = wrong.get(name, 0) + 1
        except dist.DistError as e:
            errors[name] = f"{type(e).__name__}: {e}"

    threads = [threading.Thread(target=loop, args=(v,), name=f"worker-{v:g}") for v in (1.0, 1000.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    alive = [t.name for t in threads if t.is_alive()]
    try:
        dist.destroy_process_group()
    except dist.DistError:
        pass
    return {"errors": errors, "wrong": wrong, "alive": alive}


@pytest.mark.timeout(120)
def test_two_threads_on_one_group_raise_naming_both_threads():
    results = run_ranks(two_threads, 2, args=(400,), timeout=100, env={"DISTTORCH_TIMEOUT": "30"})
    for rank, out in enumerate(results):
        assert not out["alive"], f"rank {rank}: threads still running {out['alive']}"
        assert out["errors"], f"rank {rank}: no error, wrong results: {out['wrong']}"
        text = " ".join(out["errors"].values())
        assert "'worker-1'" in text and "'worker-1000'" in text and "still pending" in text, text
