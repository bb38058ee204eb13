"""Rank 1 stops itself (SIGSTOP) at once, as a rank frozen before init_process_group; rank 0
sees it stopped, then waits SECONDS (argv[2]) and exits 3. argv[1]: a directory for rank 1's pid."""

import os
import signal
import sys
import time
from pathlib import Path

pid_file = Path(sys.argv[1]) / "rank1.pid"
if os.environ["RANK"] == "1":
    pid_file.write_text(str(os.getpid()))
    os.kill(os.getpid(), signal.SIGSTOP)


def stopped() -> bool:
    try:
        stat = Path(f"/proc/{pid_file.read_text()}/stat").read_text()
    except (OSError, ValueError):
        return False
    return stat[stat.rfind(")") + 2] == "T"


while not stopped():
    time.sleep(0.02)
time.sleep(float(sys.argv[2]))
sys.exit(3)
