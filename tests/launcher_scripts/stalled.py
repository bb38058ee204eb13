"""Rank 1 writes its pid to DIR/rank1.pid (argv[1]) and, in the first attempt only, stops itself
(SIGSTOP); once continued it exits 0. Rank 0 exits 0 at once."""

import os
import signal
import sys
from pathlib import Path

if os.environ["RANK"] == "1":
    (Path(sys.argv[1]) / "rank1.pid").write_text(str(os.getpid()))
    if os.environ["DISTTORCH_RESTART_COUNT"] == "0":
        os.kill(os.getpid(), signal.SIGSTOP)
