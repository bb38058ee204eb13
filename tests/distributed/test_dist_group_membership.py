"""A subgroup's membership is agreed when ``new_group`` is called: the same members in any
order make one group; different member lists, or a rank that skips the call, raise on every
rank within seconds, naming the ranks."""

from __future__ import annotations

import time

import numpy as np
import pytest

from dist_helpers import run_ranks


def memberships(rank: int, world: int) -> dict:
    import disttorch.distributed as dist

    dist.init_process_group()
    out = {}
    # the same members, listed in a different order on every rank
    listed = [list(range(world))[rank:] + list(range(world))[:rank]]
    g = dist.new_group(listed[0][::-1] if rank % 2 else listed[0])
    x = np.full(4, rank + 1.0, np.float32)
    dist.all_reduce(x, group=g)
    out["order"] = x.tolist()
    # different member lists: ranks 0 and 1 say [0, 1], the last rank says [1, 2]
    start = time.monotonic()
    try:
        dist.new_group([0, 1] if rank < 2 else [1, 2])
        out["lists"] = "returned"
    except dist.DistBackendError as e:
        out["lists"] = str(e)
    out["lists_s"] = time.monotonic() - start
    # the last rank skips new_group and goes on with a collective of the default group
    start = time.monotonic()
    try:
        if rank == world - 1:
            dist.all_reduce(np.ones(2, np.float32))
        else:
            dist.new_group([0, 1])
        out["skip"] = "returned"
    except dist.CollectiveMismatchError as e:
        out["skip"] = str(e)
    out["skip_s"] = time.monotonic() - start
    return out


@pytest.mark.timeout(120)
def test_new_group_membership_is_agreed_at_creation():
    world = 3
    results = run_ranks(memberships, world, timeout=100, env={"DISTTORCH_TIMEOUT": "60"})
    for rank, out in enumerate(results):
        assert out["order"] == [6.0] * 4, f"rank {rank}: {out['order']}"
        assert "ranks 0, 1 passed [0, 1]; rank 2 passed [1, 2]" in out["lists"], out["lists"]
        assert out["lists_s"] < 10, out
        assert "new_group(uint8[3]) #" in out["skip"] and "all_reduce(float32[2]" in out["skip"], out["skip"]
        assert out["skip_s"] < 10, out
