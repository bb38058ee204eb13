"""Two groups with the same members, their collectives issued in a different order on the two
ranks (rank 0: group 1 then group 2; rank 1: group 2 then group 1). Each group is its own
communicator, as with gloo: issued asynchronously, both complete. Issued synchronously from
one thread, each rank blocks in the collective the other has not called (a deadlock gloo
reports only at its timeout): it is reported within seconds, naming both groups and ranks."""

from __future__ import annotations

import time
from datetime import timedelta

import numpy as np
import pytest

from dist_helpers import run_ranks


def crossed(rank: int, world: int) -> list[dict]:
    import disttorch.distributed as dist

    dist.init_process_group(timeout=timedelta(seconds=20))
    outs = []
    for async_op in (True, False):
        groups = [dist.new_group([0, 1]), dist.new_group([0, 1])]
        order = groups if rank == 0 else groups[::-1]
        start = time.monotonic()
        try:
            bufs = [np.full(3, float(rank + 1)) for _ in order]
            works = [dist.all_reduce(b, group=g, async_op=async_op) for b, g in zip(bufs, order)]
            for w in works if async_op else ():
                w.wait()
            out = {"sums": [b.tolist() for b in bufs]}
        except dist.DistError as e:
            out = {"error": f"{type(e).__name__}: {e}"}
        out["elapsed"] = time.monotonic() - start
        outs.append(out)
    return outs


@pytest.mark.timeout(40)
def test_crossed_groups_complete_when_asynchronous_and_are_named_within_seconds_when_blocking():
    for rank, (independent, blocking) in enumerate(run_ranks(crossed, 2, timeout=30)):
        assert independent.get("sums") == [[3.0] * 3, [3.0] * 3], independent
        assert independent["elapsed"] < 3, independent
        text = blocking.get("error", "")
        assert blocking["elapsed"] < 8, f"rank {rank} took {blocking['elapsed']:.1f} s: {blocking}"
        assert text.startswith("CollectiveMismatchError"), blocking
        # groups 3 and 4 are the blocking round's; the first rank to see it tells the other
        assert "all_reduce(float64[3], op=SUM) #1 of group 3" in text, text
        assert "all_reduce(float64[3], op=SUM) #1 of group 4" in text, text
        assert "ranks 0 and 1 called" in text or "ranks 1 and 0 called" in text, text
