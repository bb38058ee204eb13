"""A rank that all-reduces a 4 MiB buffer (many rounds through the host's shared memory) in a
loop until a peer fails; prints READY once it has done one, and FAILED with the time on failure.

    python shm_loop.py                 (the rank's environment as the launcher sets it)
"""

import os
import time

import numpy as np

import disttorch.distributed as dist

dist.init_process_group("gloo")
x = np.ones(1 << 20, np.float32)
dist.all_reduce(x)
print(f"READY {dist.get_rank()} {os.getpid()}", flush=True)
try:
    while True:
        x[:] = 1
        dist.all_reduce(x)
except Exception as e:
    print(f"FAILED {time.time():.3f} {type(e).__name__}: {e}", flush=True)
    raise
