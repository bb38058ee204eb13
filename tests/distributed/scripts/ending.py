"""A rank that shares memory with its host's ranks and binds ipc sockets, starts a child process, then ends as
asked: normal | exception | exit (os._exit) | wait (until killed) | wait_detached (the same, its child in a
session of its own, out of the rank's process group); wait_tempdir: the same, having made its multiprocessing
temporary directory."""

import multiprocessing.util
import os
import subprocess
import sys
import time

import numpy as np

import disttorch.distributed as dist

how, marker = sys.argv[1], sys.argv[2]
dist.init_process_group("gloo")
x = np.ones(1 << 16, np.float32)  # 256 KiB: through the shared-memory segment
dist.all_reduce(x)
child = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(600)", marker], start_new_session=how == "wait_detached"
)
if how.endswith("_tempdir"):  # as passing a shared-memory tensor makes it, for its listening socket
    multiprocessing.util.get_temp_dir()
print(f"READY {dist.get_rank()} {os.getpid()} {child.pid}", flush=True)
if how.startswith("wait"):
    time.sleep(600)
child.kill()
child.wait()
if how == "exception":
    raise RuntimeError("this rank fails on purpose")
if how == "exit":
    os._exit(0)
