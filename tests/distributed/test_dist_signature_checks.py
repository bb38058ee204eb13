"""The collective signature carries the reduce op and the root: ranks that disagree raise on
every rank naming both sides. DDP raises when a rank stopped training without ``join()``."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

from dist_helpers import run_ranks


def disagree(rank: int, world: int, kinds: list[str]) -> dict[str, dict]:
    """Make the disagreeing calls of each of ``kinds`` in turn, each on a fresh group of every
    rank (a mismatch breaks its group); per kind, what the calls raised and the seconds from
    the first call to the raise (measured here: process start-up and rendezvous are not
    counted)."""
    import disttorch.distributed as dist

    dist.init_process_group()
    outcomes = {}
    for kind in kinds:
        group = dist.new_group(list(range(world)))
        start, error = time.monotonic(), None
        try:
            _disagreeing_calls(dist, rank, world, kind, group)
        except dist.DistError as e:
            error = e
        outcomes[kind] = {"error": error, "elapsed": time.monotonic() - start}
    return outcomes


def _disagreeing_calls(dist, rank: int, world: int, kind: str, group) -> None:
    x = np.ones(6, np.float32)
    if kind == "sum-max":
        dist.all_reduce(x, op=dist.ReduceOp.SUM if rank == 0 else dist.ReduceOp.MAX, group=group)
    elif kind == "sum-avg":
        dist.all_reduce(x, op=dist.ReduceOp.AVG if rank == world - 1 else dist.ReduceOp.SUM, group=group)
    elif kind == "reduce-dst":
        dist.reduce(x, dst=0 if rank == 0 else 1, group=group)
    elif kind == "scatter-op":
        dist.reduce_scatter_tensor(
            np.zeros(2, np.float32),
            np.ones(2 * world, np.float32),
            op=dist.ReduceOp.MIN if rank == 0 else dist.ReduceOp.SUM,
            group=group,
        )
    elif kind == "broadcast-src":  # every rank names itself: nobody receives in the broadcast itself
        dist.broadcast(x, src=rank, group=group)
        dist.all_reduce(x, group=group)
    elif kind == "empty-dtype":  # nothing to send: the signatures still meet
        dist.all_reduce(np.zeros(0, np.float32 if rank == 0 else np.float64), group=group)
    elif kind == "empty-size":
        dist.all_reduce(np.zeros(0 if rank == 0 else 3, np.float32), group=group)
    elif kind == "broadcast-src-last":  # ... and nothing follows but the end of the group
        dist.broadcast(x, src=rank, group=group)
        dist.destroy_process_group()


CASES = {
    "sum-max": (2, r"all_reduce\(float32\[6\], op=SUM\) #1", r"all_reduce\(float32\[6\], op=MAX\) #1"),
    "sum-avg": (3, r"all_reduce\(float32\[6\], op=SUM\) #1", r"all_reduce\(float32\[6\], op=AVG\) #1"),
    "reduce-dst": (
        2,
        r"reduce\(float32\[6\], root=0, op=SUM\) #1",
        r"reduce\(float32\[6\], root=1, op=SUM\) #1",
    ),
    "scatter-op": (2, r"op=MIN\) #1", r"op=SUM\) #1"),
    "broadcast-src": (2, r"broadcast\(float32\[6\], root=0\) #1", r"broadcast\(float32\[6\], root=1\) #1"),
    "empty-dtype": (2, r"all_reduce\(float32\[0\], op=SUM\) #1", r"all_reduce\(float64\[0\], op=SUM\) #1"),
    "empty-size": (2, r"all_reduce\(float32\[0\], op=SUM\) #1", r"all_reduce\(float32\[3\], op=SUM\) #1"),
    "broadcast-src-last": (
        2,
        r"broadcast\(float32\[6\], root=0\) #1",
        r"broadcast\(float32\[6\], root=1\) #1",
    ),
}


@pytest.fixture(scope="module")
def disagreements():
    """``outcomes(kind)``: each rank's outcome of ``kind``. The cases of one world size share
    one launch (``broadcast-src-last``, which ends every group, runs last)."""
    launches = {}

    def outcomes(kind: str) -> list[dict]:
        world = CASES[kind][0]
        if world not in launches:
            kinds = [k for k, case in CASES.items() if case[0] == world]
            env = {"DISTTORCH_TIMEOUT": "60"}
            launches[world] = run_ranks(disagree, world, args=(kinds,), timeout=80, env=env)
        return [ranks[kind] for ranks in launches[world]]

    return outcomes


@pytest.mark.timeout(90)
@pytest.mark.parametrize("kind", list(CASES))
def test_disagreeing_ranks_raise_on_every_rank_naming_both_sides(kind, disagreements):
    import disttorch.distributed as dist

    _, one, other = CASES[kind]
    for rank, outcome in enumerate(disagreements(kind)):
        error, elapsed = outcome["error"], outcome["elapsed"]
        assert isinstance(error, dist.CollectiveMismatchError), f"rank {rank}: {error!r}"
        text = str(error)
        assert re.search(one, text) and re.search(other, text), text
        # well inside the 60 s timeout: the mismatch is named, not waited out
        assert elapsed < 40, f"rank {rank} raised {elapsed:.0f} s after its call: a mismatch must fail fast"


def ddp_uneven(rank: int, world: int, use_join: bool) -> list[float]:
    import disttorch as torch
    import disttorch.distributed as dist

    dist.init_process_group()
    model = torch.nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        model.weight.fill_(1.0)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    grads = []
    steps = 3 if rank == 0 else 2

    def loop() -> None:
        for _ in range(steps):
            ddp(torch.full((1, 1), 4.0 * (rank + 1))).sum().backward()
            grads.append(model.weight.grad.item())
            model.weight.grad = None

    if use_join:
        with ddp.join():
            loop()
    else:
        loop()
    return grads


@pytest.mark.timeout(90)
def test_ddp_rank_that_stops_without_join_makes_the_others_raise():
    import disttorch.distributed as dist

    results = run_ranks(
        ddp_uneven, 2, args=(False,), timeout=80, check=False, env={"DISTTORCH_TIMEOUT": "60"}
    )
    assert results[1].ok, results[1].describe()
    assert results[1].value == [6.0, 6.0]
    error = results[0].error
    assert isinstance(error, dist.PeerDiedError), results[0].describe()
    assert "rank 1" in str(error) and "join()" in str(error), str(error)


@pytest.mark.timeout(90)
def test_ddp_uneven_with_join_still_trains():
    grads = run_ranks(ddp_uneven, 2, args=(True,), timeout=80)
    assert grads[0] == [6.0, 6.0, 2.0] and grads[1] == [6.0, 6.0]


ROOTED = [
    "broadcast",
    "reduce",
    "gather",
    "scatter",
    "broadcast_object_list",
    "gather_object",
    "scatter_object_list",
]


def rooted_at_call(rank: int, world: int, roots: list[int]) -> dict:
    """Call every rooted collective with root ``roots[rank]``, each on a fresh group (a
    mismatch breaks its group); report what each call itself did."""
    import disttorch.distributed as dist

    dist.init_process_group()
    root, x, outcomes = roots[rank], np.ones(6, np.float32), {}
    for kind in ROOTED:
        g = dist.new_group(list(range(world)))
        listed = [np.ones(6, np.float32) for _ in range(world)] if rank == root else None
        calls = {
            "broadcast": lambda: dist.broadcast(x, src=root, group=g),
            "reduce": lambda: dist.reduce(x, dst=root, group=g),
            "gather": lambda: dist.gather(x, listed, dst=root, group=g),
            "scatter": lambda: dist.scatter(x, listed, src=root, group=g),
            "broadcast_object_list": lambda: dist.broadcast_object_list([rank, "x"], src=root, group=g),
            "gather_object": lambda: dist.gather_object(rank, [None] * world if listed else None, root, g),
            "scatter_object_list": lambda: dist.scatter_object_list(
                [None], list(range(world)) if listed else None, src=root, group=g
            ),
        }
        try:
            calls[kind]()
            outcomes[kind] = "returned"
        except dist.CollectiveMismatchError as e:
            outcomes[kind] = f"CollectiveMismatchError: {e}"
    dist.destroy_process_group()  # the default group was never used: it closes cleanly
    return outcomes


@pytest.mark.timeout(150)
@pytest.mark.parametrize("world,roots", [(2, [0, 1]), (3, [0, 1, 0])])
def test_a_mismatched_root_raises_on_every_rank_at_that_call(world, roots):
    # every rank names itself (nobody receives), and two ranks agree while the third differs
    results = run_ranks(rooted_at_call, world, args=(roots,), timeout=130, env={"DISTTORCH_TIMEOUT": "60"})
    for rank, outcomes in enumerate(results):
        for kind in ROOTED:
            outcome = outcomes[kind]
            assert outcome.startswith("CollectiveMismatchError"), (
                f"{kind} on rank {rank} of {world}: {outcome}"
            )
            assert re.search(r"root=(\d)[,)].* but rank \d.* called \w+\(.*root=(?!\1)\d", outcome), outcome


def all_to_all_sizes(rank: int, world: int) -> dict:
    """all_to_all calls whose sizes disagree; what each call did on this rank. A rank's own
    block that does not fit raises there before any message leaves, and the same group then
    serves the corrected call; a peer's block of another size breaks its group."""
    import disttorch.distributed as dist

    dist.init_process_group()
    ones = [np.ones(n, np.float32) for n in (2, 3)]

    def single(g, splits, out_splits=(2, 2)):
        out = np.zeros(4, np.float32)
        dist.all_to_all_single(out, np.full(4, rank + 1, np.float32), list(out_splits), splits, g)
        return out.tolist()

    def listed(g, own):
        out = [np.zeros(2, np.float32) for _ in range(2)]
        dist.all_to_all(out, [np.full(2, rank + 1, np.float32), ones[own]], group=g)
        return [o.tolist() for o in out]

    calls = {  # rank 1 keeps 3 elements for itself but has room for 2
        "own-split": lambda g: single(g, [2, 2] if rank == 0 else [1, 3]),
        "own-list": lambda g: listed(g, rank),
        # rank 1's split sizes sum to its 4 rows, but one is negative (a slice from the end)
        "negative-split": lambda g: single(
            g, [2, 2] if rank == 0 else [5, -1], (2, 2) if rank == 0 else (5, -1)
        ),
        # rank 1 sends 3 elements to rank 0, which has room for 2
        "cross-split": lambda g: dist.all_to_all_single(
            np.zeros(4, np.float32), np.ones(4 + rank, np.float32), [2, 2], [2 + rank, 2], g
        ),
    }
    retries = {
        "own-split": lambda g: single(g, [2, 2]),
        "own-list": lambda g: listed(g, 0),
        "negative-split": lambda g: single(g, [2, 2]),
    }
    outcomes = {}
    for kind, call in calls.items():
        group = dist.new_group([0, 1])
        try:
            outcomes[kind] = f"returned {call(group)}"
        except (RuntimeError, ValueError, dist.DistBackendError) as e:
            outcomes[kind] = f"{type(e).__name__}: {e}"
            if kind in retries:
                outcomes[kind] += f" | retried {retries[kind](group)}"
    dist.destroy_process_group()
    return outcomes


@pytest.mark.timeout(60)
def test_all_to_all_sizes_that_disagree_are_named():
    own = "RuntimeError: {}: group rank 1 sends 3 elements to itself but its receive block for itself holds 2"
    r0, r1 = run_ranks(all_to_all_sizes, 2, timeout=50, env={"DISTTORCH_TIMEOUT": "30"})
    # rank 1 raises alone, before sending, and its corrected call meets rank 0's first one
    assert r0["own-split"] == "returned [1.0, 1.0, 2.0, 2.0]", r0
    assert r0["own-list"] == "returned [[1.0, 1.0], [2.0, 2.0]]", r0
    check = "[enforce fail] inLengthPerRank[myRank] == outLengthPerRank[myRank]"
    assert r1["own-split"].startswith(own.format(check)), r1
    assert "input_split_sizes[1] must equal" in r1["own-split"], r1
    assert r1["own-split"].endswith("| retried [1.0, 1.0, 2.0, 2.0]"), r1
    assert r1["own-list"].startswith(
        own.format("ProcessGroupGloo::alltoall: invalid tensor size at index 1")
    ), r1
    assert "input_tensor_list[1] and output_tensor_list[1]" in r1["own-list"], r1
    assert r1["own-list"].endswith("| retried [[1.0, 1.0], [1.0, 1.0]]"), r1
    assert r0["negative-split"] == "returned [1.0, 1.0, 2.0, 2.0]", r0
    assert r1["negative-split"].startswith(
        "ValueError: input split sizes [5, -1] must be 2 non-negative numbers summing to 4"
    ), r1
    assert r1["negative-split"].endswith("| retried [1.0, 1.0, 2.0, 2.0]"), r1
    assert r0["cross-split"].startswith("CollectiveMismatchError"), r0
    sent = r"rank 1 \(group \d+ rank 1\) sent 12 bytes as message 0 but rank 0 \(group \d+ rank 0\) expected 8 bytes"
    assert re.search(sent, r0["cross-split"]), r0
    assert "input_split_sizes against output_split_sizes" in r0["cross-split"], r0
