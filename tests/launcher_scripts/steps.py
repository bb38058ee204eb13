"""Test worker: a "training loop" of STEPS steps that calls disttorch._faults.maybe_inject at each.

usage: steps.py STEPS OUT_DIR
Each step is timed; the times are written to OUT_DIR/rank<RANK>_attempt<N>.json at the end.
A drop handler records that it was called.
"""

import json
import os
import sys
import time

from disttorch import _faults as faults

steps, out_dir = int(sys.argv[1]), sys.argv[2]
dropped = []
faults.register_drop_handler(lambda fault: dropped.append(fault.spec))
times = []
for step in range(1, steps + 1):
    start = time.monotonic()
    faults.maybe_inject("step", step)
    times.append(time.monotonic() - start)
    print(f"step {step}", flush=True)
rank, attempt = os.environ["RANK"], os.environ["DISTTORCH_RESTART_COUNT"]
with open(os.path.join(out_dir, f"rank{rank}_attempt{attempt}.json"), "w") as f:
    json.dump({"times": times, "dropped": dropped}, f)
