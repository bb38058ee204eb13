"""A process group's own collectives (``pg.allreduce([t], opts)``, ``pg.broadcast(t, root)``,
...), as libraries call PyTorch's ``ProcessGroup`` methods: each returns a ``Work``, with the
group's ranks; on two real processes sharing one launch."""

from __future__ import annotations

import pytest

from dist_helpers import run_ranks


def _worker(rank: int, world: int) -> dict:
    import disttorch as torch
    import disttorch.distributed as dist
    from disttorch.distributed.distributed_c10d import _get_default_group

    dist.init_process_group("gloo")
    pg, out = dist.group.WORLD, {}
    t = torch.tensor([1.0, 2.0]) * (rank + 1)
    work = pg.allreduce([t])
    out["work"] = (type(work).__name__, work.wait())
    opts = dist.AllreduceOptions()
    opts.reduceOp = dist.ReduceOp.MAX
    pg.allreduce([t], opts).wait()
    out["allreduce"] = t.tolist()
    pg.allreduce([t], op=dist.ReduceOp.SUM).wait()
    out["allreduce_op"] = t.tolist()
    b = torch.full((2,), float(rank))
    b_opts = dist.BroadcastOptions()
    b_opts.rootRank = 1
    pg.broadcast([b], b_opts).wait()
    c = torch.full((2,), float(rank + 5))
    _get_default_group().broadcast(c, 0).wait()
    out["broadcast"] = (b.tolist(), c.tolist())
    gathered = [torch.zeros(1) for _ in range(world)]
    pg.allgather([gathered], [torch.tensor([float(rank)])]).wait()
    out["allgather"] = [g.item() for g in gathered]
    scattered = torch.zeros(1)
    pg.reduce_scatter([scattered], [[torch.tensor([1.0 + i]) for i in range(world)]]).wait()
    out["reduce_scatter"] = scattered.item()
    sub = dist.new_group([1, 0])
    if rank == 0:
        sub.send([torch.tensor([7.0])], 1, 3).wait()
    else:
        got = torch.zeros(1)
        sub.recv([got], 0, 3).wait()
        out["recv"] = got.item()
    out["barrier"] = (type(sub.barrier()).__name__, pg.barrier(dist.BarrierOptions()).wait())
    try:
        pg.reduce([t, t])
    except RuntimeError as error:
        out["two"] = str(error)
    plain = torch.ones(2)  # PyTorch's third form: one tensor, no list
    pg.allreduce(plain, dist.ReduceOp.SUM).wait()
    out["plain"] = plain.tolist()
    try:  # (an AttributeError on rootRank before)
        pg.broadcast([plain], dist.AllreduceOptions())
    except TypeError as error:
        out["wrong_options"] = str(error)
    _lists_and_new_methods(rank, world, pg, out)
    dist.destroy_process_group()
    return out


def _lists_and_new_methods(rank: int, world: int, pg, out: dict) -> None:
    """Lists of several tensors where gloo takes them, the methods PyTorch has besides, and
    a timeout in the options (last: it breaks the group)."""
    import time
    from datetime import timedelta

    import disttorch as torch
    import disttorch.distributed as dist

    a, b = torch.ones(2), torch.full((2,), 2.0)
    pg.allreduce([a, b]).wait()  # (the list's tensors count as more ranks' worth)
    out["allreduce_list"] = (a.tolist(), b.tolist())
    try:
        pg.allreduce([torch.ones(2), torch.ones(3)])
    except RuntimeError as error:
        out["allreduce_shapes"] = str(error)
    c, d = torch.ones(2) * (rank + 1), torch.ones(3) * (rank + 1)
    opts = dist.AllreduceCoalescedOptions()
    opts.reduceOp = dist.ReduceOp.MAX
    pg.allreduce_coalesced([c, d], opts).wait()
    out["allreduce_coalesced"] = (c.tolist(), d.tolist())
    x, y = torch.full((2,), float(rank)), torch.full((2,), float(rank + 5))
    b_opts = dist.BroadcastOptions()
    b_opts.rootRank, b_opts.rootTensor = 1, 1
    pg.broadcast([x, y], b_opts).wait()
    out["broadcast_list"] = (x.tolist(), y.tolist())
    rows = [[torch.zeros(1) for _ in range(2 * world)] for _ in range(2)]
    pg.allgather(rows, [torch.tensor([float(rank)]), torch.tensor([rank + 5.0])]).wait()
    out["allgather_lists"] = [[t.item() for t in row] for row in rows]
    mine = torch.tensor([rank + 1.0])
    g_opts = dist.GatherOptions()
    got = [[torch.zeros(1) for _ in range(world)]] if rank == 0 else []
    pg.gather(got, [mine], g_opts).wait()
    got1 = [torch.zeros(1) for _ in range(world)] if rank == 1 else []
    pg.gather(got1, mine, 1).wait()
    out["gather"] = ([t.item() for t in got[0]] if got else None, [t.item() for t in got1])
    if rank == 1:  # (refused before anything is sent)
        try:
            pg.gather([[torch.zeros(1)] * world], [mine], g_opts)
        except RuntimeError as error:
            out["gather_non_root"] = str(error)
    s0, s1 = torch.zeros(1), torch.zeros(1)
    pg.scatter([s0], [[torch.tensor([7.0 + i]) for i in range(world)]] if rank == 0 else []).wait()
    pg.scatter(s1, [torch.tensor([9.0 + i]) for i in range(world)] if rank == 1 else [], 1).wait()
    out["scatter"] = (s0.item(), s1.item())
    received = [torch.zeros(1) for _ in range(world)]
    pg.alltoall(received, [torch.tensor([10.0 * rank + i]) for i in range(world)]).wait()
    splits = [1, 2] if rank == 0 else [2, 3]
    single = torch.zeros(sum(splits))
    pg.alltoall_base(single, torch.arange(float(sum(splits))) + 10 * rank, splits, splits).wait()
    out["alltoall"] = ([t.item() for t in received], single.tolist())
    o1, o2 = torch.zeros(2 * world), torch.zeros(world)
    pg.allgather_into_tensor_coalesced(
        [o1, o2], [torch.full((2,), float(rank)), torch.tensor([5.0 + rank])]
    ).wait()
    r1, r2 = torch.zeros(1), torch.zeros(2)
    inputs = [torch.arange(float(world)) + rank, torch.arange(2.0 * world) + rank]
    pg.reduce_scatter_tensor_coalesced([r1, r2], inputs).wait()
    out["tensor_coalesced"] = (o1.tolist(), o2.tolist(), r1.tolist(), r2.tolist())
    timeout_opts = dist.AllreduceOptions()
    timeout_opts.timeout = timedelta(seconds=0.3)
    if rank == 0:
        start = time.monotonic()
        try:
            pg.allreduce([torch.ones(1)], timeout_opts).wait()
        except RuntimeError as error:
            out["timeout"] = (type(error).__name__, time.monotonic() - start)
    else:
        time.sleep(1.0)


@pytest.fixture(scope="module")
def ranks() -> list:
    return run_ranks(_worker, 2, timeout=60)


def test_collective_methods_return_work_and_compute_as_the_functions(ranks):
    for rank, out in enumerate(ranks):
        assert out["work"] == ("Work", True)
        assert out["allreduce"] == [3.0, 6.0]  # (the sum, then MAX of equal tensors)
        assert out["allreduce_op"] == [6.0, 12.0]
        assert out["broadcast"] == ([1.0, 1.0], [5.0, 5.0])
        assert out["allgather"] == [0.0, 1.0]
        assert out["reduce_scatter"] == 2.0 * (1 + rank)
        assert out["barrier"] == ("Work", True)
        assert out["two"] == "ProcessGroup.reduce: requires a single-element tensor list (as gloo), got 2"
        assert out["plain"] == [2.0, 2.0]
        assert out["wrong_options"].endswith("expected BroadcastOptions, got AllreduceOptions")


def test_send_and_recv_methods_use_the_groups_ranks(ranks):
    assert ranks[1]["recv"] == 7.0


def test_lists_of_several_tensors_as_gloo(ranks):
    for out in ranks:
        assert out["allreduce_list"] == ([6.0, 6.0], [6.0, 6.0])
        assert "tensor 1 is float32[3], tensor 0 float32[2]" in out["allreduce_shapes"]
        assert out["allreduce_coalesced"] == ([2.0, 2.0], [2.0, 2.0, 2.0])
        assert out["broadcast_list"] == ([6.0, 6.0], [6.0, 6.0])  # (rank 1's second tensor)
        assert out["allgather_lists"] == [[0.0, 5.0, 1.0, 6.0]] * 2
    assert ranks[1]["gather_non_root"].endswith("requires an empty output list on non-root ranks")


def test_gather_scatter_alltoall_and_coalesced_tensor_methods(ranks):
    assert ranks[0]["gather"] == ([1.0, 2.0], [])
    assert ranks[1]["gather"] == (None, [1.0, 2.0])
    assert [out["scatter"] for out in ranks] == [(7.0, 9.0), (8.0, 10.0)]
    assert ranks[0]["alltoall"] == ([0.0, 10.0], [0.0, 10.0, 11.0])
    assert ranks[1]["alltoall"] == ([1.0, 11.0], [1.0, 2.0, 12.0, 13.0, 14.0])
    for rank, out in enumerate(ranks):
        o1, o2, r1, r2 = out["tensor_coalesced"]
        assert (o1, o2) == ([0.0, 0.0, 1.0, 1.0], [5.0, 6.0])
        assert r1 == [2.0 * rank + 1] and r2 == [4.0 * rank + 1, 4.0 * rank + 3]


def test_a_timeout_in_the_options_bounds_the_call(ranks):
    kind, seconds = ranks[0]["timeout"]
    assert kind == "DistTimeoutError" and seconds < 0.9
