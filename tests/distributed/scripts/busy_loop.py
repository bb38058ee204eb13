"""A rank that all-reduces in a loop until a peer fails; prints READY and, on failure, the time."""

import os
import sys
import time

import numpy as np

import disttorch.distributed as dist

dist.init_process_group("gloo")
print(f"READY {dist.get_rank()} {os.getpid()}", flush=True)
if len(sys.argv) > 1 and sys.argv[1] == "exit-early" and dist.get_rank() == 1:
    sys.exit(0)
x = np.ones(16, np.float32)
try:
    while True:
        dist.all_reduce(x)
        x[:] = 1
        time.sleep(0.01)
except Exception as e:
    print(f"FAILED {time.time():.3f} {type(e).__name__}: {e}", flush=True)
    raise
