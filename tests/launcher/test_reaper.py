"""The launcher's run directory outlives a job only until the next launcher starts: when every
process of a job was killed at once (the guardian included), the next one removes it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from disttorch.launcher import reaper


@pytest.mark.skipif(not os.path.exists("/proc/self/ns/pid"), reason="needs Linux /proc")
def test_a_new_run_directory_removes_those_of_dead_launchers_only(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    space = reaper._pid_namespace()
    stale = tmp_path / f"disttorch-launch-{space}-{dead.pid}-abc"
    live = tmp_path / f"disttorch-launch-{space}-{os.getpid()}-abc"
    elsewhere = tmp_path / f"disttorch-launch-{space}1-{dead.pid}-abc"  # another pid namespace
    for d in (stale, live, elsewhere):
        (d / "attempt_0").mkdir(parents=True)
    made = reaper.make_run_dir()
    assert os.path.basename(made).startswith(f"disttorch-launch-{space}-{os.getpid()}-")
    assert sorted(os.listdir(tmp_path)) == sorted([live.name, elsewhere.name, os.path.basename(made)])
