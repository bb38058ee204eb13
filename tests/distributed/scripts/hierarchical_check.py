"""One rank of a job spanning hosts: checks that the group sees its hosts, then runs
all-reduce (every op, several dtypes and sizes), broadcast, reduce, barrier and the block
collectives (all_gather, reduce_scatter, gather, scatter, all_to_all in their tensor,
list and object forms; odd, zero and non-contiguous sizes) through the automatic choice
and prints ``OK <rank> <digest of the all-reduce bits>`` or raises."""

import hashlib
import sys

import numpy as np

import disttorch.distributed as dist
from disttorch.distributed.algorithms import select
from disttorch.distributed.groups import GroupMember

expected_hosts = eval(sys.argv[1])  # e.g. [[0, 1], [2, 3]]
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
transport = GroupMember.WORLD.transport
assert transport.hosts == expected_hosts and transport.shared, transport.hosts
local = next(h for h in expected_hosts if rank in h)
assert (1 if transport.board is None else transport.board.size) == len(local), transport.board
assert select.choose("all_reduce", 1 << 20, world, hosts=transport.hosts) == "hierarchical"


def value(r, n, dtype):
    return ((np.arange(n) * 7 + r * 3) % 5 + 1).astype(dtype)


ops = {"SUM": np.add, "PRODUCT": np.multiply, "MIN": np.minimum, "MAX": np.maximum}
digest = hashlib.sha256()
for dtype in ("float32", "float64", "int64"):
    for n in (1, 7, 1001, 300_001):
        for name, fn in ops.items():
            x = value(rank, n, dtype)
            dist.all_reduce(x, op=getattr(dist.ReduceOp, name))
            want = value(0, n, dtype)
            for r in range(1, world):
                want = fn(want, value(r, n, dtype)).astype(dtype)
            assert np.allclose(x, want, rtol=1e-5), (dtype, n, name)
            digest.update(x.tobytes())
for root in range(world):
    x = value(rank, 100_003, "float32")
    dist.broadcast(x, src=root)
    assert np.array_equal(x, value(root, 100_003, "float32")), root
    x = value(rank, 5001, "int64")
    dist.reduce(x, dst=root)
    if rank == root:
        assert np.array_equal(x, sum(value(r, 5001, "int64") for r in range(world))), root
for collective in ("all_gather", "reduce_scatter", "gather", "scatter", "all_to_all"):
    assert select.choose(collective, 1 << 20, world, hosts=transport.hosts) == "hierarchical"


def strided(n, dtype="float32"):
    """A non-contiguous array of ``n`` elements (every second of a buffer)."""
    return np.zeros(2 * n, dtype)[::2]


for n in (0, 1, 7, 100_003):
    parts = [strided(n) for _ in range(world)]
    dist.all_gather(parts, value(rank, n, "float32"))
    assert all(np.array_equal(p, value(r, n, "float32")) for r, p in enumerate(parts)), n
    whole = np.zeros((world, n), np.int64)
    dist.all_gather_into_tensor(whole, value(rank, n, "int64"))
    assert all(np.array_equal(whole[r], value(r, n, "int64")) for r in range(world)), n
    out = strided(n, "float64")
    dist.reduce_scatter(out, [value(rank + r, n, "float64") for r in range(world)])
    assert np.array_equal(out, sum(value(r + rank, n, "float64") for r in range(world))), n
    out = np.zeros(n, np.int64)
    dist.reduce_scatter_tensor(out, value(rank, world * n, "int64"), op=dist.ReduceOp.MAX)
    want = np.max([value(r, world * n, "int64") for r in range(world)], axis=0)
    assert np.array_equal(out, want[rank * n : (rank + 1) * n]), n
    for root in range(world):
        got = [strided(n) for _ in range(world)] if rank == root else None
        dist.gather(value(rank, n, "float32"), got, dst=root)
        assert rank != root or all(np.array_equal(g, value(r, n, "float32")) for r, g in enumerate(got))
        out = strided(n)
        dist.scatter(
            out, [value(root + r, n, "float32") for r in range(world)] if rank == root else None, root
        )
        assert np.array_equal(out, value(root + rank, n, "float32")), (n, root)
    recvs = [strided(n + (s * 2 + rank) % 3, "int32") for s in range(world)]
    dist.all_to_all(recvs, [value(rank * world + d, n + (rank * 2 + d) % 3, "int32") for d in range(world)])
    for s, got in enumerate(recvs):
        assert np.array_equal(got, value(s * world + rank, n + (s * 2 + rank) % 3, "int32")), (n, s)
splits = lambda src: [(src + d) % 3 for d in range(world)]  # noqa: E731 - rows rank src sends to d
out = np.zeros((sum(splits(s)[rank] for s in range(world)), 3), np.float32)
dist.all_to_all_single(
    out,
    np.full((sum(splits(rank)), 3), rank, np.float32),
    [splits(s)[rank] for s in range(world)],
    splits(rank),
)
assert np.array_equal(out[:, 0], np.repeat(np.arange(world), [splits(s)[rank] for s in range(world)]))
objects = [None] * world
dist.all_gather_object(objects, {"rank": rank, "text": "x" * rank})
assert objects == [{"rank": r, "text": "x" * r} for r in range(world)]
got = [None] * world if rank == world - 1 else None
dist.gather_object(("from", rank), got, dst=world - 1)
assert rank != world - 1 or got == [("from", r) for r in range(world)]
mine = [None]
dist.scatter_object_list(mine, [f"to {r}" for r in range(world)] if rank == 0 else None, src=0)
assert mine == [f"to {rank}"]
dist.barrier()
print(f"OK {rank} {digest.hexdigest()}", flush=True)
dist.destroy_process_group()
