"""When a collective, ``send`` or ``isend().wait()`` returns, its bytes cannot be lost by the
process ending with ``os._exit`` right after (forked ranks, 20 repetitions of each kind, zero losses)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("kind", ["barrier", "broadcast", "broadcast_shm", "send", "send_big", "isend"])
def test_os_exit_right_after_an_operation_loses_nothing(kind):
    env = dict(os.environ, PYTHONPATH=REPO, DISTTORCH_TIMEOUT="60")
    env.pop("DISTTORCH_JOB_SECRET", None)
    reps = 20
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "scripts", "exit_right_after.py"), kind, str(reps)],
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "FAILURES 0 []" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-3000:]
