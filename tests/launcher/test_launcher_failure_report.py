"""The launcher's failure summary with real disttorch ranks: the rank that raised is the root
cause even when the peer that noticed exits first; the ranks that only reported it show one
line and no library internals; a frozen rank the launcher stopped is said to be stopped by it (and, frozen before it joined,
is named by the launcher while the others wait);
a rank that exited 0 while the others wait for it is named; a rank that cannot write its
error record (a full disk) still shows its exception."""

import re
import signal
import subprocess
import sys
import time

import pytest

from disttorch._error_file import read_error_file
from disttorch.launcher.failure import RankExit, blame, format_gave_up, format_summary

from launcher_scripts.harness import SCRIPTS, launch, launcher_env, start

PEERS = SCRIPTS / "peers.py"


def rank_exit(rank, code, t, stopped=False, record=None):
    return RankExit(rank, rank, 0, "h", 100 + rank, code, t, stopped=stopped, record=record)


def test_a_rank_that_raised_is_the_root_cause_even_when_its_reporter_exited_first():
    reporter = rank_exit(
        0,
        1,
        10.0,
        record={"kind": "exception", "error": "PeerDiedError: rank 1 left the group", "blamed_rank": 1},
    )
    raised = rank_exit(
        1,
        1,
        10.4,
        record={
            "kind": "exception",
            "error": "ValueError: rank 1 cannot go on",
            "where": 'train.py, line 9, in step: raise ValueError("rank 1 cannot go on")',
            "traceback": "Traceback (most recent call last):\n  ...\nValueError: rank 1 cannot go on\n",
        },
    )
    root, by = blame(reporter, [reporter, raised])
    assert root is raised and by is None
    text = format_summary(root, [reporter, raised], 0, 0, reported_by=by)
    assert "rank 1 was the first to fail: ValueError: rank 1 cannot go on" in text
    assert "stopped responding" not in text
    assert '  where      : train.py, line 9, in step: raise ValueError("rank 1 cannot go on")' in text
    assert "  rank 0    (node 0, pid 100): failed, exit code 1: PeerDiedError: rank 1 left the group" in text


def test_the_last_line_after_the_restarts_are_spent_names_each_attempts_cause():
    # --max-restarts with a rank that fails at once each time: the boxes of every attempt,
    # then one line saying the launcher gave up, of what, and how soon each attempt failed
    same = format_gave_up(["ValueError: bad rank"] * 3, 1.24)
    assert same == (
        "gave up after 2 restarts; all 3 attempts failed the same way: ValueError: bad rank; "
        "every attempt ended within 1.2 s of its start"
    )
    mixed = format_gave_up(["exit code 3", "signal SIGSEGV (11)", "exit code 3"], 40.0)
    assert "the attempts failed of: exit code 3 (2x); signal SIGSEGV (11) (1x)" in mixed


def test_a_frozen_rank_the_launcher_stopped_is_not_said_to_be_killed_from_outside():
    reporter = rank_exit(
        0, 1, 10.0, record={"kind": "exception", "error": "PeerDiedError: x", "blamed_rank": 1}
    )
    frozen = rank_exit(1, -15, 12.0, stopped=True)
    root, by = blame(reporter, [reporter, frozen])
    text = format_summary(root, [reporter, frozen], 0, 0, reported_by=by)
    assert "from outside the launcher" not in text
    assert "the launcher stopped this rank (signal SIGTERM (15)) after rank 0 reported it" in text
    frozen.frozen = True  # the launcher saw it stopped by a signal
    text = format_summary(root, [reporter, frozen], 0, 0, reported_by=by)
    assert "it was frozen by\n  a signal from outside the job (SIGSTOP, or SIGTSTP" in text, text


def test_the_ranks_the_launcher_stopped_name_the_rank_whose_failure_stopped_them():
    # rank 1 killed (before it could tell its peers anything): the others' line says why they
    # were stopped, not only that they were
    killed = rank_exit(1, -9, 10.0)
    ranks = [rank_exit(0, -15, 10.2, stopped=True), killed, rank_exit(2, -15, 10.2, stopped=True)]
    text = format_summary(killed, ranks, 0, 0)
    assert "  ranks 0,2: stopped by the launcher after rank 1 failed (signal SIGTERM (15))" in text, text


def test_ranks_that_failed_the_same_way_share_one_line():
    ranks = [
        rank_exit(r, 1, 10.0 + r, record={"kind": "exception", "error": "SyntaxError: x (a.py, line 2)"})
        for r in range(3)
    ]
    text = format_summary(ranks[0], ranks, 0, 0)
    assert "  ranks 1-2: failed the same way as rank 0" in text
    assert text.count("SyntaxError") == 1  # the headline says it all: no error line repeats it


@pytest.mark.timeout(90)
def test_the_rank_that_raised_leads_and_its_peer_reports_in_one_line(tmp_path):
    result = launch("--nproc", 2, PEERS, "raise", timeout=80)
    assert result.returncode == 1, result.stderr
    summary = result.stderr[result.stderr.index("job failed") :]
    assert "rank 1 was the first to fail: ValueError: rank 1 cannot go on" in summary, summary
    assert "where      : " in summary and 'in step: raise ValueError("rank 1 cannot go on")' in summary
    reporter = [line for line in summary.splitlines() if "rank 0 " in line and "(node 0" in line]
    assert len(reporter) == 1 and "exit code 1" in reporter[0], summary
    rank0 = [line for line in result.stderr.splitlines() if line.startswith("[rank0]:")]
    assert rank0 and not any("process_group.py" in line or "peer_channel.py" in line for line in rank0), rank0
    assert len(rank0) <= 8, rank0  # the user's frames and the message


@pytest.mark.timeout(60)
def test_a_rank_stopped_while_it_exits_still_reports_what_it_raised():
    # rank 0 records its PeerDiedError at once, then takes 60 s to exit: the launcher stops it
    # after --stop-delay, and the summary still says what it failed of
    result = launch("--nproc", 2, "--stop-delay", 3, PEERS, "slow-exit", timeout=50)
    assert result.returncode == 1, result.stderr
    summary = result.stderr[result.stderr.index("job failed") :]
    assert "rank 1 was the first to fail: ValueError: rank 1 cannot go on" in summary, summary
    assert re.search(
        r"rank 0 +\(node 0, pid \d+\): failed, signal SIGTERM \(15\), stopped by the launcher as it "
        r"exited: PeerDiedError: rank 1 left the group",
        summary,
    ), summary


@pytest.mark.timeout(90)
def test_a_frozen_rank_is_named_by_the_one_waiting_and_stopped_by_the_launcher():
    result = launch("--nproc", 2, PEERS, "freeze", timeout=80)
    assert result.returncode == 1, result.stderr
    summary = result.stderr[result.stderr.index("job failed") :]
    assert "waiting for rank 1" in summary.splitlines()[0], summary
    assert "rank 1   : stopped by the launcher after rank 0 failed (signal SIGTERM (15))" in summary, summary
    assert "from outside the launcher" not in summary


@pytest.mark.timeout(60)
def test_a_rank_frozen_while_the_others_wait_is_named_by_the_launcher(tmp_path):
    # rank 1 stopped before init_process_group: rank 0 only ever says it waits for rank 1
    result = launch("--nproc", 2, "--stop-delay", 0, SCRIPTS / "frozen.py", tmp_path, 2.6, timeout=50)
    assert result.returncode == 1, result.stderr
    notice = [line for line in result.stderr.splitlines() if "has been stopped by a signal" in line]
    assert len(notice) == 1, result.stderr
    pid = (tmp_path / "rank1.pid").read_text()
    assert notice[0].startswith(f"[launcher] rank 1 (pid {pid}) has been stopped"), notice
    assert f"until it gets SIGCONT (kill -CONT {pid})" in notice[0], notice
    summary = result.stderr[result.stderr.index("job failed") :]
    assert (
        "rank 1   : stopped by the launcher after rank 0 failed (signal SIGTERM (15)), which found it frozen"
        in summary
    )


@pytest.mark.timeout(90)
def test_a_rank_that_exits_0_while_the_others_wait_is_named(tmp_path):
    proc = start("--nproc", 2, PEERS, "leave")
    started = time.monotonic()
    try:
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if "exited 0" in line and "still run" in line:
                break
        elapsed = time.monotonic() - started
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert "rank(s) 1 exited 0" in seen[-1] and "rank(s) 0 still run" in seen[-1], "".join(seen)
    assert elapsed < 40, f"the launcher said it after {elapsed:.1f} s"


def test_a_rank_that_cannot_write_its_error_record_still_reports_its_exception(tmp_path):
    # a full disk where the record goes (here: a path no file can have): the rank's own
    # traceback still reaches its stderr, and the summary says a record may be missing
    script = tmp_path / "raises.py"
    script.write_text('raise ValueError("the real reason")\n')
    env = launcher_env({"DISTTORCH_ERROR_FILE": "/dev/null/error.json"})
    proc = subprocess.run(
        [sys.executable, "-m", "disttorch.launcher.bootstrap", str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 1
    assert proc.stderr.rstrip().endswith("ValueError: the real reason"), proc.stderr
    assert "OSError" not in proc.stderr and "NotADirectoryError" not in proc.stderr, proc.stderr
    text = format_summary(rank_exit(0, 1, 10.0), [rank_exit(0, 1, 10.0)], 0, 0)
    assert "could not record one (a full disk?)" in text


def test_a_rank_ended_by_sys_exit_with_a_message_records_it(tmp_path):
    # sys.exit("message") is a script's usual way to give up: the summary shows the message
    # and the line, not "exited with code 1 without an uncaught exception"
    script = tmp_path / "gives_up.py"
    script.write_text('import sys\n\nsys.exit("no data in /x: pass --data")\n')
    error_file = tmp_path / "error.json"
    env = launcher_env({"DISTTORCH_ERROR_FILE": str(error_file)})
    proc = subprocess.run(
        [sys.executable, "-m", "disttorch.launcher.bootstrap", str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 1 and proc.stderr == "no data in /x: pass --data\n", proc.stderr
    record = read_error_file(str(error_file))
    assert record["error"] == "SystemExit: no data in /x: pass --data"
    assert record["where"] == f'{script}, line 3, in <module>: sys.exit("no data in /x: pass --data")'
    text = format_summary(rank_exit(0, 1, 10.0, record=record), [rank_exit(0, 1, 10.0, record=record)], 0, 0)
    assert "rank 0 was the first to fail: SystemExit: no data in /x: pass --data" in text
    assert "without an uncaught" not in text
