"""A rank that runs one collective on 4 MiB (many rounds through the host's shared memory)
in a loop until a peer fails; prints READY once it has done one, and FAILED with the time
on failure.

    python shm_loop.py [COLLECTIVE]    (the rank's environment as the launcher sets it)

COLLECTIVE: ``all_reduce`` (default), ``all_gather`` or ``all_to_all``.
"""

import os
import sys
import time

import numpy as np

import disttorch.distributed as dist

dist.init_process_group("gloo")
world = dist.get_world_size()
x = np.ones(1 << 20, np.float32)
run = {
    "all_reduce": lambda: dist.all_reduce(x),
    "all_gather": lambda: dist.all_gather_into_tensor(x, x[: x.size // world].copy()),
    "all_to_all": lambda: dist.all_to_all_single(x, x.copy()),
}[sys.argv[1] if len(sys.argv) > 1 else "all_reduce"]
run()
print(f"READY {dist.get_rank()} {os.getpid()}", flush=True)
try:
    while True:
        x[:] = 1
        run()
except Exception as e:
    print(f"FAILED {time.time():.3f} {type(e).__name__}: {e}", flush=True)
    raise
