"""A process forked after ``init_process_group`` shares its parent's group object but not its
connections: a collective or a send in the child raises at once, naming the parent, and the
child's exit leaves the parent's group working. Its ``init_process_group`` with the inherited
environment does not join its parent's job as its parent's rank."""

from __future__ import annotations

import os
import time
from datetime import timedelta

import numpy as np
import pytest

from dist_helpers import run_ranks


def forked_child(rank: int, world: int) -> dict:
    import disttorch.distributed as dist

    dist.init_process_group()
    x = np.ones(4, np.float32)
    dist.all_reduce(x)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: every use of the inherited group must fail fast
        os.close(read)
        messages = []
        for call in (
            lambda: dist.all_reduce(np.ones(4, np.float32)),
            lambda: dist.broadcast(np.ones(4, np.float32), src=0),
            lambda: dist.send(np.ones(1, np.float32), dst=1 - rank),
            lambda: dist.barrier(),
        ):
            start = time.monotonic()
            try:
                call()
                messages.append("returned")
            except Exception as e:  # noqa: BLE001 - reported to the parent
                messages.append(f"{type(e).__name__} {time.monotonic() - start:.1f}s: {e}")
        try:
            dist.destroy_process_group()  # forgets the group, touches nothing of the parent's
            start = time.monotonic()
            try:  # the inherited environment names the parent's job: it must not join it
                dist.init_process_group(timeout=timedelta(seconds=20))
                messages.append("joined")
            except Exception as e:  # noqa: BLE001 - reported to the parent
                messages.append(f"{type(e).__name__} {time.monotonic() - start:.1f}s: {e}")
            os.write(write, "\n".join(messages).encode())
            os.close(write)
        finally:
            os._exit(0 if not dist.is_initialized() else 3)
    os.close(write)
    with os.fdopen(read) as f:
        child = f.read()
    _, status = os.waitpid(pid, 0)
    dist.all_reduce(x)  # the parent's group still works
    dist.destroy_process_group()
    return {"child": child.splitlines(), "status": status, "sum": x.tolist(), "rank": rank}


@pytest.mark.timeout(90)
def test_a_forked_child_cannot_use_its_parents_group():
    results = run_ranks(forked_child, 2, timeout=80, env={"DISTTORCH_TIMEOUT": "60"})
    for r in results:
        assert r["status"] == 0 and r["sum"] == [4.0] * 4, r
        assert len(r["child"]) == 5, r["child"]
        *uses, joining = r["child"]
        assert float(joining.split(" ")[1].rstrip("s:")) < 5, joining
        if r["rank"] == 1:  # rank 0's store port is its parent's: that fails first, as it should
            assert joining.startswith("RuntimeError") and "rank 1 of this job is already taken" in joining
        for line in uses:
            name, seconds = line.split(" ")[:2]
            assert name == "DistBackendError" and float(seconds.rstrip("s:")) < 2, line
            assert "belongs to process" in line and "forked" in line, line


def test_a_rank_claim_sees_a_claim_made_since_its_check_and_replaces_an_ended_holder():
    """The claim is one compare-and-set: two processes claiming a rank at once (the store's
    check answered before the other's set) cannot both hold it; a holder whose pid now names
    another process (its start time differs: it ended, the pid was reused) is replaced."""
    import json

    import disttorch.distributed as dist
    from disttorch._process_state import start_time
    from disttorch.distributed.rendezvous import _holder_key, _host_key, _pid_namespace, claim_rank

    class LateCheck(dist.HashStore):  # answers check() as before the other claim arrived
        def check(self, keys):
            return False

    def holder(started):
        pid = os.getppid()  # a live process of this host
        return json.dumps({"host": _host_key(), "pidns": _pid_namespace(), "pid": pid, "started": started})

    store = LateCheck()
    store.set(_holder_key(1), holder(start_time(os.getppid())))
    with pytest.raises(RuntimeError, match="rank 1 of this job is already taken"):
        claim_rank(store, 1)
    store.set(_holder_key(1), holder(-1))
    claim_rank(store, 1)
    assert json.loads(store.get(_holder_key(1)))["pid"] == os.getpid()
