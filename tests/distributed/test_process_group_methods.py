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
        pg.allreduce([t, t])
    except ValueError as error:
        out["two"] = str(error)
    plain = torch.ones(2)  # PyTorch's third form: one tensor, no list
    pg.allreduce(plain, dist.ReduceOp.SUM).wait()
    out["plain"] = plain.tolist()
    try:  # (an AttributeError on rootRank before)
        pg.broadcast([plain], dist.AllreduceOptions())
    except TypeError as error:
        out["wrong_options"] = str(error)
    dist.destroy_process_group()
    return out


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
        assert out["two"] == "ProcessGroup.allreduce: expected a list of one tensor, got 2"
        assert out["plain"] == [2.0, 2.0]
        assert out["wrong_options"].endswith("expected BroadcastOptions, got AllreduceOptions")


def test_send_and_recv_methods_use_the_groups_ranks(ranks):
    assert ranks[1]["recv"] == 7.0
