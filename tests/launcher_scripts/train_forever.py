"""Test worker: records its pid, joins the process group and all-reduces until it is stopped
(60 s at most); after its first all-reduce it writes PID_DIR/rank<RANK>.step.

usage: train_forever.py PID_DIR
"""

import os
import sys
import time

import disttorch as torch
import disttorch.distributed as dist

pid_dir, rank = sys.argv[1], os.environ["RANK"]
with open(os.path.join(pid_dir, f"rank{rank}.pid.tmp"), "w") as f:
    f.write(str(os.getpid()))
os.replace(os.path.join(pid_dir, f"rank{rank}.pid.tmp"), os.path.join(pid_dir, f"rank{rank}.pid"))
dist.init_process_group("gloo")
x = torch.ones(1 << 16)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    dist.all_reduce(x)
    x /= dist.get_world_size()
    if not os.path.exists(os.path.join(pid_dir, f"rank{rank}.step")):
        open(os.path.join(pid_dir, f"rank{rank}.step"), "w").close()
