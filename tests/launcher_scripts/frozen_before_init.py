"""Rank 1 writes its pid to DIR/rank1.pid (argv[1]) and stops itself (SIGSTOP) before
init_process_group, where rank 0 waits for it (for 60 s)."""

import os
import signal
import sys
from datetime import timedelta
from pathlib import Path

import disttorch.distributed as dist

if os.environ["RANK"] == "1":
    (Path(sys.argv[1]) / "rank1.pid").write_text(str(os.getpid()))
    os.kill(os.getpid(), signal.SIGSTOP)
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
dist.destroy_process_group()
