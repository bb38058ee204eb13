"""Point-to-point state lives only as long as its message: after many messages with distinct
tags the receiver holds nothing per tag, its memory stays flat, and the leftover check at the
start of every collective does not walk a list that grows with the tags ever used."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from dist_helpers import run_ranks

MESSAGES = 20_000


def distinct_tags(rank: int, world: int, n: int) -> dict:
    import disttorch.distributed as dist
    from disttorch.distributed.groups import resolve_group

    dist.init_process_group()
    pg = resolve_group(None)
    buf = np.zeros(4, np.float32)
    growth = 0
    for half in range(2):
        if half == 1:
            tracemalloc.start()  # the Python heap: what per-tag state would be made of
        tags = range(half * n // 2, (half + 1) * n // 2)
        if rank == 0:
            for w in [dist.isend(np.full(4, t, np.float32), dst=1, tag=t) for t in tags]:
                w.wait()
        else:
            for t in tags:
                dist.recv(buf, src=0, tag=t)
                assert buf[0] == t
        dist.barrier()
        if half == 1:
            growth = tracemalloc.get_traced_memory()[0]
            tracemalloc.stop()
    entries = len(pg.transport._stash)
    dist.all_reduce(buf)
    dist.destroy_process_group()
    return {"entries": entries, "growth_kib": growth // 1024}


@pytest.mark.timeout(240)
def test_distinct_tags_leave_no_per_tag_state_behind():
    results = run_ranks(distinct_tags, 2, args=(MESSAGES,), timeout=220, env={"DISTTORCH_TIMEOUT": "120"})
    receiver = results[1]
    assert receiver["entries"] == 0, f"{receiver['entries']} stash entries left after every message was taken"
    # the leak was ~870 bytes a message: ~8.5 MiB over the second 10,000
    assert receiver["growth_kib"] < 1024, (
        f"the Python heap grew {receiver['growth_kib']} KiB over {MESSAGES // 2} messages"
    )
