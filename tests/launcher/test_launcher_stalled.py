"""A job whose every rank still running is stopped by a signal (SIGSTOP) has nobody left to time
out: the launcher ends it after ``--stopped-timeout`` seconds, naming the ranks and their pids;
a rank continued (SIGCONT) before that goes on as usual."""

import os
import re
import signal
import sys
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


def _stopped_pid(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "T"
    except OSError:
        return False


def _stopped(pid_file):
    try:
        return _stopped_pid(int(pid_file.read_text()))
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


def _spec(rank, code):
    from disttorch.launcher import workers

    return workers.WorkerSpec(
        rank, rank, 0, [sys.executable, "-c", code], dict(os.environ), "/nonexistent", None, None, None, None
    )


def test_a_launcher_stopped_with_its_ranks_counts_their_stop_afresh(monkeypatch):
    # a suspended job (the launcher stopped too, then every process continued): the time the
    # launcher did not look is not counted as the ranks' stop; and a node whose ranks are all
    # stopped, none ended, is a job paused on purpose: never stalled
    from disttorch.launcher import workers

    group = workers.WorkerGroup(
        [_spec(0, "import time; time.sleep(60)"), _spec(1, "import time; time.sleep(60)")], set()
    )
    group.start()
    try:
        for proc in group._procs:
            os.kill(proc.pid, signal.SIGSTOP)
        while not all(_stopped_pid(proc.pid) for proc in group._procs):
            time.sleep(0.01)
        group.newly_frozen(2.0, every=0.1)
        assert group.stalled() == ([], 0.0)  # paused whole
        os.kill(group._procs[1].pid, signal.SIGKILL)
        while 1 not in group.ended:
            time.sleep(0.01)
        now = time.monotonic()
        monkeypatch.setattr(workers.time, "monotonic", lambda: now)
        group.newly_frozen(2.0, every=0.1)
        now += 1.0
        group.newly_frozen(2.0, every=0.1)
        assert 0.9 < group.stalled()[1] < 1e3
        now += 3600  # the launcher ran nothing for an hour
        assert group.newly_frozen(2.0, every=0.1) == [] and group.stalled()[1] == 0.0
        now += 2.0
        assert [pid for _, pid, _ in group.newly_frozen(2.0, every=0.1)] == [group._procs[0].pid]
        assert [pid for _, pid in group.stalled()[0]] == [group._procs[0].pid]
        os.kill(group._procs[0].pid, signal.SIGCONT)  # continued since that look: not stalled
        while _stopped_pid(group._procs[0].pid):
            time.sleep(0.01)
        assert group.stalled() == ([], 0.0)
    finally:
        monkeypatch.undo()
        group.stop(0.0)
