"""Test worker: ranks all-reduce in a loop; rank 1 breaks in the way argv asks.

usage: peers.py MODE
MODE: raise (rank 1 raises ValueError in its third step), freeze (rank 1 stops itself with
SIGSTOP; the others time out after 3 s), leave (rank 1 exits 0 without joining the group; rank 0
waits for it up to 60 s), slow-exit (as raise, but the others take 60 s to exit after they
raise: an exit handler sleeps).
"""

import atexit
import os
import signal
import sys
import time
from datetime import timedelta

import disttorch
import disttorch.distributed as dist

mode = sys.argv[1]
if mode == "leave" and os.environ["RANK"] == "1":
    sys.exit(0)
if mode == "slow-exit" and os.environ["RANK"] != "1":
    atexit.register(time.sleep, 60)
dist.init_process_group("gloo", timeout=timedelta(seconds=60 if mode == "leave" else 3))
rank = dist.get_rank()
t = disttorch.ones(4)


def step(i):
    if rank == 1 and i == 3:
        if mode in ("raise", "slow-exit"):
            raise ValueError("rank 1 cannot go on")
        os.kill(os.getpid(), signal.SIGSTOP)  # frozen: not even its communication thread answers
    dist.all_reduce(t)


for i in range(6):
    step(i)
dist.destroy_process_group()
