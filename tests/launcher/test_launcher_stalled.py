"""A job whose every rank still running is stopped by a signal (SIGSTOP) has nobody left to time
out: the launcher ends it after ``--stopped-timeout`` seconds, naming the ranks and their pids;
a rank continued (SIGCONT) before that goes on as usual."""

import os
import re
import signal
import time

import pytest

from launcher_scripts.harness import SCRIPTS, launch, start

STALLED = SCRIPTS / "stalled.py"


@pytest.mark.timeout(60)
def test_a_rank_left_stopped_after_the_others_ended_is_named_and_the_job_fails(tmp_path):
    result = launch(
        "--nproc", 2, "--stopped-timeout", 0.5, "--stop-grace", 0.5, STALLED, tmp_path, timeout=50
    )
    assert result.returncode == 1, result.stderr
    pid = (tmp_path / "rank1.pid").read_text()
    said = re.search(
        rf"rank 1 \(pid {pid}\) stayed stopped by a signal \(SIGSTOP, or SIGTSTP: Ctrl-Z\) for "
        r"(\d+\.\d) s while rank\(s\) 0 had ended: nothing could continue them",
        result.stderr,
    )
    assert said is not None and 0.5 <= float(said[1]) < 5, result.stderr
    assert "--stopped-timeout 0.5; raise it, or 0 to wait for ever" in result.stderr


def _stopped(pid_file):
    try:
        with open(f"/proc/{int(pid_file.read_text())}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "T"
    except (OSError, ValueError):
        return False


@pytest.mark.timeout(60)
def test_a_stopped_rank_continued_in_time_finishes_the_job(tmp_path):
    proc = start("--nproc", 2, "--stopped-timeout", 3, STALLED, tmp_path)
    try:
        pid_file = tmp_path / "rank1.pid"
        deadline = time.monotonic() + 30
        while not _stopped(pid_file) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
        os.kill(int(pid_file.read_text()), signal.SIGCONT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "stayed stopped" not in err
