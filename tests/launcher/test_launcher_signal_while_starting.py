"""A SIGTERM that comes while the launcher is still starting its ranks ends the launch at once:
the ranks not yet started are never started (a large --nproc must not delay a stop)."""

import signal
import subprocess
import sys
import time

import pytest


@pytest.mark.timeout(90)
def test_sigterm_while_starting_many_ranks_ends_the_launch_within_seconds():
    cmd = [sys.executable, "-m", "disttorch.launcher", "--no-python", "--nproc", "400", "/bin/sleep", "60"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        seen = ""
        while "[launcher] run " not in seen and time.monotonic() < deadline:
            seen += proc.stderr.readline()
        assert "[launcher] run " in seen, seen
        time.sleep(0.5)  # inside WorkerGroup.start: 400 ranks take tens of seconds to start
        proc.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        assert proc.wait(timeout=60) == 128 + signal.SIGTERM
        assert time.monotonic() - sent < 10
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
