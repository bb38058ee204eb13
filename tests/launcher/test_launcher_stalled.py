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
def test_a_rank_left_stopped_after_the_others_ended_fails_the_attempt_which_restarts(tmp_path):
    result = launch(
        "--nproc", 2, "--stopped-timeout", 0.5, "--stop-grace", 0.5, "--max-restarts", 1, STALLED, tmp_path,
        timeout=50,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr  # the restarted group (rank 1 not stopped) succeeds
    first = result.stderr.split("restarting the worker group: restart 1 of 1")[0]
    pid = re.search(r"rank 1 \(pid (\d+)\) has been stopped", first) or re.search(r"pid (\d+)", first)
    said = re.search(
        r"job failed \(attempt 1 of 2\): rank 1 \(pid (\d+)\) stayed stopped by a signal \(SIGSTOP, or SIGTSTP: "
        r"Ctrl-Z\) for (\d+\.\d) s while rank\(s\) 0 had ended: nothing could continue it, so the launcher ended "
        r"it \(--stopped-timeout 0.5; raise it, or 0 to wait for ever\)",
        first,
    )
    assert said is not None and 0.5 <= float(said[2]) < 5, result.stderr
    assert pid is not None and "ran nothing since a signal from outside the job stopped it" in first


@pytest.mark.timeout(60)
def test_a_rank_stopped_before_init_process_group_while_another_waits_there_ends_the_job(tmp_path):
    started = time.monotonic()
    result = launch(
        "--nproc", 2, "--stopped-timeout", 1, "--stop-grace", 0.5, SCRIPTS / "frozen_before_init.py", tmp_path,
        timeout=50,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert time.monotonic() - started < 30  # not the 60 s rank 0 would wait in init_process_group
    pid = (tmp_path / "rank1.pid").read_text()
    said = re.search(
        rf"job failed \(attempt 1 of 1\): rank 1 \(pid {pid}\) stayed stopped by a signal \(SIGSTOP, or "
        r"SIGTSTP: Ctrl-Z\) for (\d+\.\d) s while rank\(s\) 0 still ran: they wait for it until their own "
        r"timeout where nothing notices a frozen peer \(init_process_group, a store's wait\), so the launcher",
        result.stderr,
    )
    assert said is not None and 1 <= float(said[1]) < 10, result.stderr
    assert re.search(r"rank 0 +: stopped by the launcher", result.stderr), result.stderr


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


def test_a_launcher_stopped_with_its_ranks_does_not_count_the_time_it_was_stopped(monkeypatch):
    # a suspended job (the launcher stopped too, then every process continued): the time the
    # launcher did not look is not counted as the ranks' stop, however short (a --stopped-timeout
    # of 1 s and a launcher stopped for 3 s); and a node whose ranks are all stopped, none ended,
    # is a job paused on purpose: never stalled
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
        assert group.stalled() == []  # paused whole
        os.kill(group._procs[1].pid, signal.SIGKILL)
        while 1 not in group.ended:
            time.sleep(0.01)
        now = time.monotonic()
        monkeypatch.setattr(workers.time, "monotonic", lambda: now)

        def look(seconds):  # the launcher's looks every 0.1 s: the pids named meanwhile
            nonlocal now
            found = []
            for _ in range(round(seconds / 0.1)):
                now += 0.1
                found += [pid for _, pid, _ in group.newly_frozen(2.0, every=0.1)]
            return found, group.stalled()

        look(0.5)
        assert [pid for _, pid, _ in group.stalled()] == [group._procs[0].pid]
        assert 0.4 < group.stalled()[0][2] < 0.6
        now += 3.0  # the launcher ran nothing for 3 s
        assert group.newly_frozen(2.0, every=0.1) == [] and group.stalled()[0][2] < 0.8
        found, stalled = look(1.5)
        assert found == [group._procs[0].pid] and 2.0 <= stalled[0][2] < 2.4
        os.kill(group._procs[0].pid, signal.SIGCONT)  # continued since that look: not stalled
        while _stopped_pid(group._procs[0].pid):
            time.sleep(0.01)
        assert group.stalled() == []
    finally:
        monkeypatch.undo()
        group.stop(0.0)
