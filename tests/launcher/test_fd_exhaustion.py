"""A rank out of file descriptors: libzmq aborted the process (SIGABRT, "Too many open files
(src/epoll.cpp)") when its I/O thread could get none, and the rank's error record could not be
written; now the socket is refused with an ``OSError`` naming ``RLIMIT_NOFILE`` and the number
open, and the descriptor the bootstrap holds in reserve lets the record be written."""

import json
import subprocess
import sys

from launcher_scripts.harness import launcher_env

EXHAUST = """
import os, resource, socket
import disttorch.distributed as dist
"x".encode("idna")  # the codec rendezvous needs, imported while files can still be opened
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
n = len(os.listdir("/proc/self/fd")) - 1
resource.setrlimit(resource.RLIMIT_NOFILE, (n + 3, n + 3))
hold = []
try:
    while True:
        hold.append(os.open(os.devnull, os.O_RDONLY))
except OSError:
    pass
for _ in range(3):  # enough for a socket, too few for libzmq's I/O thread
    os.close(hold.pop())
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
"""


def test_a_rank_out_of_file_descriptors_records_an_error_naming_the_limit(tmp_path):
    script = tmp_path / "exhaust.py"
    script.write_text(EXHAUST)
    record = tmp_path / "error.json"
    proc = subprocess.run(
        [sys.executable, "-m", "disttorch.launcher.bootstrap", str(script)],
        env=launcher_env({"DISTTORCH_ERROR_FILE": str(record)}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    error = json.loads(record.read_text())["error"]
    assert error.startswith("OSError: [Errno 24]") and "RLIMIT_NOFILE soft limit" in error, error
    assert "file descriptors open" in error, error
