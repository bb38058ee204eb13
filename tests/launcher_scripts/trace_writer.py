"""Test worker: writes a tiny Chrome trace DISTTORCH_TRACE_DIR/rank<RANK>.json, as DDP does."""

import json
import os

rank = int(os.environ["RANK"])
events = [
    {"name": "forward", "ph": "X", "ts": 10 * rank, "dur": 5, "pid": os.getpid(), "tid": 1},
    {"name": "allreduce", "ph": "X", "ts": 10 * rank + 5, "dur": 3, "pid": os.getpid(), "tid": 2},
]
with open(os.path.join(os.environ["DISTTORCH_TRACE_DIR"], f"rank{rank}.json"), "w") as f:
    json.dump(events, f)
