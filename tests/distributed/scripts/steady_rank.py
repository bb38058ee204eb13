"""A rank that trains-and-checkpoints for a while: all-reduce, then write a checkpoint file,
every 50 ms, until DURATION seconds passed. Rank 0 prints its attack surface (store port and
peer endpoint) and every rank prints how many steps and checkpoints it completed."""

import os
import sys
import time

import numpy as np

import disttorch.distributed as dist
from disttorch.distributed.groups import GroupMember

duration, out_dir = float(sys.argv[1]), sys.argv[2]
dist.init_process_group("gloo")
rank = dist.get_rank()
endpoint = GroupMember.WORLD.transport._router.getsockopt_string(__import__("zmq").LAST_ENDPOINT)
print(f"READY {rank} {os.getpid()} {os.environ['MASTER_PORT']} {endpoint}", flush=True)
x = np.ones(1024, np.float32)
start, steps = time.monotonic(), 0
stop = np.zeros(1, np.int64)
while True:
    stop[0] = time.monotonic() - start > duration
    dist.broadcast(stop, src=0)
    if stop[0]:
        break
    dist.all_reduce(x)
    x[:] = 1
    with open(os.path.join(out_dir, f"ckpt-r{rank}.bin"), "wb") as f:
        f.write(x.tobytes())
    steps += 1
    time.sleep(0.05)
print(f"DONE {rank} {steps}", flush=True)
dist.destroy_process_group()
