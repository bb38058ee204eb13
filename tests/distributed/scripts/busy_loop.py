"""A rank that all-reduces in a loop until a peer fails; prints READY and, on failure, the time.
With ``restart-ends``, a restarted attempt (``DISTTORCH_RESTART_COUNT`` > 0) all-reduces three
times, prints DONE and exits 0."""

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
if len(sys.argv) > 1 and sys.argv[1] == "restart-ends" and os.environ.get("DISTTORCH_RESTART_COUNT") != "0":
    for _ in range(3):
        dist.all_reduce(x)
    print(f"DONE {dist.get_rank()} {x[0]:g}", flush=True)
    sys.exit(0)
try:
    while True:
        dist.all_reduce(x)
        x[:] = 1
        time.sleep(0.01)
except Exception as e:
    print(f"FAILED {time.time():.3f} {type(e).__name__}: {e}", flush=True)
    raise
