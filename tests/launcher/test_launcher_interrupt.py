"""Ctrl-C at any moment of a launch: status 130, no traceback, nothing left behind.

A terminal's Ctrl-C sends SIGINT to the launcher's whole process group (its workers run in
sessions of their own). The test sends it at several moments, each found by what the
launch has done so far rather than by a delay, and checks the same invariant each time.
"""

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import psutil
import pytest

from disttorch.launcher import cli, main

from launcher_scripts.harness import ROOT, SCRIPTS, assert_all_gone, command, launcher_env, recorded_pids

TRAIN = SCRIPTS / "train_forever.py"


def _moment_reached(moment: str, out: Path, tmp: Path, stderr: Path) -> bool:
    if moment == "agent":  # the agent made its run directory: its guardian and rendezvous follow
        return any(tmp.glob("disttorch-launch-*"))
    if moment == "start":  # the start table is out: the ranks are being started
        return "[launcher] run " in stderr.read_text()
    if moment == "ranks":  # every rank runs its script (importing disttorch, joining the group)
        return len(list(out.glob("rank*.pid"))) == 2
    return len(list(out.glob("rank*.step"))) == 2  # "training": every rank all-reduced


def _shared_memory() -> set:
    """disttorch's named files in /dev/shm (it names none on Linux: memfd segments; checked anyway)."""
    return {n for n in os.listdir("/dev/shm") if "disttorch" in n} if os.path.isdir("/dev/shm") else set()


def _job_processes(mark: str) -> list:
    """The live processes whose environment carries ``mark`` (the launcher's, inherited by all)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get("DISTTORCH_TEST_MARK") == mark and proc.status() != psutil.STATUS_ZOMBIE:
                found.append((proc.pid, proc.cmdline()))
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass
    return found


@pytest.mark.timeout(120)
@pytest.mark.parametrize("moment", ["agent", "start", "ranks", "training"])
def test_ctrl_c_at_any_moment_ends_quietly_with_130(tmp_path, moment):
    out, tmp = tmp_path / "out", tmp_path / "tmp"
    out.mkdir()
    tmp.mkdir()
    mark = uuid.uuid4().hex
    stderr = tmp_path / "stderr.txt"
    shm_before = _shared_memory()
    with open(stderr, "w") as err:
        proc = subprocess.Popen(
            command("--nproc", 2, TRAIN, out),
            cwd=ROOT,
            env=launcher_env({"TMPDIR": str(tmp), "DISTTORCH_TEST_MARK": mark}),
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,  # its own process group, as a terminal's foreground job
        )
        try:
            deadline = time.monotonic() + 60
            while not _moment_reached(moment, out, tmp, stderr):
                assert proc.poll() is None, f"the launcher ended before {moment}: {stderr.read_text()}"
                assert time.monotonic() < deadline, f"{moment} not reached in 60 s: {stderr.read_text()}"
                time.sleep(0.005)
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C
            proc.wait(timeout=30)
        finally:
            proc.kill()
    text = stderr.read_text()
    assert proc.returncode == 130, text
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
    assert "received SIGINT" in text, text
    assert_all_gone(recorded_pids(out))
    assert not _job_processes(mark)
    assert not list(tmp.iterdir())  # the run directory is removed
    assert not _shared_memory() - shm_before


def test_ctrl_c_while_the_launcher_starts_is_one_line_and_130(monkeypatch, capfd):
    def interrupted(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "parse_args", interrupted)
    assert main.main(["--nproc", "2", str(TRAIN)]) == 130
    assert capfd.readouterr().err == "[launcher] received SIGINT before the job started; exiting\n"
