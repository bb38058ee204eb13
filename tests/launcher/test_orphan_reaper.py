"""A worker is a child subreaper: the orphans of its descendants become its children. It reaps
them as they exit (no zombie piles up while it lives, double forks included), and never a child
it started itself: ``subprocess.run``, ``multiprocessing.Process.join``, ``os.waitpid`` and
``os.system`` still see their children's exit codes, nor a child C code forked and waits for.
Idle, its reaping thread never wakes."""

from __future__ import annotations

import json
import sys
import time

import pytest

from launcher_scripts.harness import assert_all_gone, launch

SCRIPT = r"""
import json, multiprocessing, os, subprocess, sys, threading, time

def zombies():
    me = os.getpid()
    out = []
    for tid in os.listdir(f"/proc/{me}/task"):
        for pid in open(f"/proc/{me}/task/{tid}/children").read().split():
            try:
                stat = open(f"/proc/{pid}/stat").read()
            except OSError:
                continue
            if stat[stat.rfind(")") + 2] == "Z":
                out.append(int(pid))
    return out

if __name__ == "__main__":
    multiprocessing.set_start_method("fork")
    # sh exits after 0.2 s; its background sleep is adopted by this worker and exits at 0.4 s
    subprocess.run(["sh", "-c", "sleep 0.4 & sleep 0.2"], check=True)
    for _ in range(30):  # double forks: the grandchild is adopted at once and exits at once
        middle = os.fork()
        if middle == 0:
            if os.fork() == 0:
                os._exit(0)
            os._exit(0)
        os.waitpid(middle, 0)
    child = multiprocessing.Process(target=sys.exit, args=(7,))
    child.start()
    late = subprocess.Popen(["sh", "-c", "exit 5"])
    forked = os.fork()
    if forked == 0:
        os._exit(9)
    spawned = os.posix_spawn("/bin/sh", ["sh", "-c", "exit 4"], os.environ)
    run = subprocess.run(["sh", "-c", "exit 3"]).returncode
    system = os.waitstatus_to_exitcode(os.system("exit 6"))
    time.sleep(0.5)  # the orphans exit; the own children above wait, exited, through several looks
    left = zombies()
    child.join()
    out = {"codes": [run, system, child.exitcode, late.wait(),
                     os.waitstatus_to_exitcode(os.waitpid(forked, 0)[1]),
                     os.waitstatus_to_exitcode(os.waitpid(spawned, 0)[1])],
           "left": left, "own": sorted([child.pid, late.pid, forked, spawned])}
    # idle (no child left): the reaping thread sleeps until a child is started
    reaper = next(t for t in threading.enumerate() if t.name == "disttorch-orphan-reaper")
    def wakeups():
        status = open(f"/proc/self/task/{reaper.native_id}/status").read()
        return int(status.split("voluntary_ctxt_switches:")[1].split()[0])
    time.sleep(0.3)  # out of its last look at the exited children
    before = wakeups()
    time.sleep(0.3)
    out["idle_wakeups"] = wakeups() - before
    with open(sys.argv[1], "w") as f:
        json.dump(out, f)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="child subreapers are Linux's")
@pytest.mark.timeout(60)
def test_a_worker_reaps_adopted_orphans_and_leaves_its_own_children_alone(tmp_path):
    script = tmp_path / "orphans.py"
    script.write_text(SCRIPT)
    result = tmp_path / "out.json"
    proc = launch("--nproc", "1", str(script), str(result), timeout=50)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(result.read_text())
    assert out["codes"] == [3, 6, 7, 5, 9, 4], out
    assert sorted(out["left"]) == out["own"], f"zombies of the worker besides its own children: {out}"
    assert out["idle_wakeups"] == 0, out


DAEMON = r"""
import subprocess, sys
# a daemon in a session of its own, holding the rank's stdout and stderr, outliving the rank
subprocess.run(["sh", "-c", f"setsid sh -c 'echo $$ > {sys.argv[1]}; exec sleep 600' &"], check=True)
while True:
    try:
        if open(sys.argv[1]).read().strip():
            break
    except OSError:
        pass
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="child subreapers are Linux's")
@pytest.mark.timeout(60)
def test_a_daemon_holding_a_ranks_output_neither_delays_the_end_nor_outlives_it(tmp_path):
    script = tmp_path / "daemon.py"
    script.write_text(DAEMON)
    proc = launch("--nproc", "1", str(script), str(tmp_path / "daemon.pid"), timeout=50)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # waiting for its output to end took 5 s per stream (over 10 s in all), counted from the
    # daemon's start (the rank ends then): starting the launcher and the rank before it takes
    # 1-5 s, over 10 s on a loaded machine
    assert time.time() - (tmp_path / "daemon.pid").stat().st_mtime < 8.5
    assert_all_gone([int((tmp_path / "daemon.pid").read_text())], within=1.0)


C_FORK = r"""
import ctypes, json, subprocess, sys
keeper = subprocess.Popen(["sleep", "5"])  # a recorded child: the reaping thread waits in waitid
libc = ctypes.CDLL(None, use_errno=True)
# fork through PyDLL, which keeps the GIL: CDLL lets go of it for the call, and a child forked
# while another thread holds it would hang at its first Python step (the thread is not copied)
holding_gil = ctypes.PyDLL(None)
codes = []
for _ in range(20):
    pid = holding_gil.fork()  # no Python hook sees it: the record does not know it
    if pid == 0:
        libc.usleep(10000)
        libc._exit(7)
    status = ctypes.c_int()
    codes.append((libc.waitpid(pid, ctypes.byref(status), 0) == pid, status.value >> 8))
keeper.kill()
keeper.wait()
with open(sys.argv[1], "w") as f:
    json.dump(codes, f)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="child subreapers are Linux's")
@pytest.mark.timeout(60)
def test_a_child_c_code_forked_keeps_its_exit_status_for_a_blocking_waitpid(tmp_path):
    """The reaping thread, woken with the C code's waitpid, took most of these exit statuses
    (waitpid failed with ECHILD); an unrecorded child is now left 0.1 s first."""
    script = tmp_path / "c_fork.py"
    script.write_text(C_FORK)
    result = tmp_path / "out.json"
    proc = launch("--nproc", "1", str(script), str(result), timeout=50)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(result.read_text()) == [[True, 7]] * 20
