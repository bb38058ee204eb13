"""One rank of a job spanning hosts: checks that the group sees its hosts, then runs
all-reduce (every op, several dtypes and sizes), broadcast, reduce and barrier through the
automatic choice and prints ``OK <rank> <digest of the all-reduce bits>`` or raises."""

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
assert transport.board is not None and transport.board.size == 2
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
dist.barrier()
print(f"OK {rank} {digest.hexdigest()}", flush=True)
dist.destroy_process_group()
