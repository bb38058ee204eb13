"""No orphans, no zombies: Linux process-lifetime controls for the launcher and its workers.

- The launcher makes itself a *child subreaper*: a process started by a worker that
  outlives its parent is re-parented to the launcher (not to PID 1, which in a container may
  never reap it), and :func:`reap_leftovers` kills and reaps such processes at teardown.
- Each worker asks for a signal when the launcher dies (*parent-death signal*), so even a
  ``kill -9`` of the launcher leaves no worker running: SIGKILL, or, when the launcher has a
  guardian (``guardian.py``), SIGSTOP, and the worker is a subreaper itself. A stopped worker
  still holds every process it started (those whose parent died were re-parented to it,
  whatever session they moved to), so the guardian finds them all below it, ends them, then
  the worker.

Both use ``prctl``; elsewhere than Linux they do nothing.

- A worker that is a subreaper adopts its descendants' orphans, which nobody else would
  reap: :func:`reap_adopted_orphans` starts a thread that reaps them when they exit, and
  only them. It tells an adopted process from one the worker started itself (whose exit
  status belongs to its ``subprocess``/``multiprocessing``/``os.waitpid`` caller) by a record
  of the children the worker starts (``own_children.py``).

- The launcher's run directory is named after its process (:func:`make_run_dir`), so the next
  launcher removes it if every process of a job was killed at once (the guardian included)
  and none was left to remove it.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time

from . import own_children

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
#: Seconds between two looks at a subreaper worker's children for orphans to reap, while one
#: of its own exited children waits for its owner.
ORPHAN_SCAN = 0.25
#: Seconds an exited child this process did not record starting is left to whoever started it
#: (C code's own ``fork`` and ``waitpid``, which no record sees) before it is reaped as an orphan.
ORPHAN_GRACE = 0.1
_exited_at: dict = {}  # (pid, start time) -> when an unrecorded child was first seen exited


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(option, value, 0, 0, 0) == 0


_RUN_DIR = "disttorch-launch-"


def _pid_namespace() -> str:
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return "0"


def make_run_dir() -> str:
    """A new run directory for this launcher, ``disttorch-launch-<pid namespace>-<pid>-...``
    in the temporary folder, after removing those of this user's launchers (in this pid
    namespace) that are dead."""
    root, space = tempfile.gettempdir(), _pid_namespace()
    pattern = re.compile(rf"{_RUN_DIR}{space}-(\d+)-")
    for entry in os.listdir(root):
        m = pattern.match(entry)
        path = os.path.join(root, entry)
        if m and not _running(int(m.group(1))) and os.lstat(path).st_uid == os.getuid():
            shutil.rmtree(path, ignore_errors=True)
    return tempfile.mkdtemp(prefix=f"{_RUN_DIR}{space}-{os.getpid()}-")


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def become_subreaper() -> bool:
    """Adopt this process's orphaned descendants (so they can be reaped). Returns success."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent(parent_pid: int, signum: int = signal.SIGKILL) -> None:
    """Get ``signum`` when the parent process (``parent_pid``) dies; exit now if it already has."""
    if _prctl(_PR_SET_PDEATHSIG, int(signum)) and os.getppid() != parent_pid:
        os._exit(1)  # the launcher died before the signal was armed


def children() -> set:
    """The pids whose parent is this process (read from /proc)."""
    me = str(os.getpid())
    found = set()
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()  # after "pid (comm) ": state, ppid, ...
        if fields[1] == me:
            found.add(int(entry))
    return found


def reap_exited(keep: set) -> None:
    """Reap every exited child of this process except the pids in ``keep`` (without blocking)."""
    for pid in children() - keep:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def reap_leftovers(keep: set) -> int:
    """SIGKILL and reap every child of this process except the pids in ``keep`` (call once all
    workers are reaped: what is left are workers' descendants adopted by the subreaper).
    Returns how many there were."""
    leftovers = children() - keep
    for pid in leftovers:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for pid in leftovers:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    return len(leftovers)


def _children_of(pid: int) -> list:
    """The children of process ``pid`` (every thread's, zombies included), from /proc."""
    kids = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                kids += [int(k) for k in f.read().split()]
        except OSError:
            pass
    return kids


def _reap_unrecorded(pids: list, interval: float) -> float:
    """Reap those of ``pids`` (exited children of this process) that it did not start itself
    and that exited at least :data:`ORPHAN_GRACE` seconds ago. Returns how long to wait
    before looking again: 0 when it reaped them all, the grace left when one is within its
    grace, else ``interval`` (one is its own, whose exit status waits for its owner, or a
    start is under way and it cannot tell)."""
    with own_children.settled() as settled:
        if not settled:
            return interval
        wait = 0.0
        now = time.monotonic()
        for pid in pids:
            if own_children.is_own(pid):
                wait = interval
                continue
            key = (pid, own_children.state_and_start(pid))
            left = ORPHAN_GRACE - (now - _exited_at.setdefault(key, now))
            if left > 0:
                wait = min(wait, left) if wait else left
                continue
            del _exited_at[key]
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
        for key in [k for k in _exited_at if own_children.state_and_start(k[0]) != k[1]]:
            del _exited_at[key]  # reaped by whoever started it
        return wait


def _exited_children() -> list:
    exited = []
    for pid in _children_of(os.getpid()):
        now = own_children.state_and_start(pid)
        if now is not None and now[0] == "Z":
            exited.append(pid)
    return exited


def reap_adopted_orphans(interval: float = ORPHAN_SCAN) -> threading.Thread:
    """Start a daemon thread that reaps this subreaper's adopted orphans as they exit, never
    a child this process started itself (:mod:`own_children` records those from now on).

    The thread sleeps in ``waitid`` (``WNOWAIT``: it leaves the exit status in place) until a
    child exits, and reaps it if it was adopted (after :data:`ORPHAN_GRACE`: a child C code
    started and waits for is not recorded). While an exited child of this process's own
    waits for its owner, ``waitid`` would return at once: the thread looks at every child
    each ``interval`` seconds instead, until that one is reaped."""
    own_children.install()

    def run() -> None:
        while True:
            own_children.started.clear()
            try:
                exited = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT)
            except ChildProcessError:  # no child at all: sleep until one is started
                own_children.started.wait()
                continue
            wait = _reap_unrecorded([exited.si_pid], interval)
            if wait:
                time.sleep(wait)
                _reap_unrecorded(_exited_children(), interval)

    thread = threading.Thread(target=run, name="disttorch-orphan-reaper", daemon=True)
    thread.start()
    return thread
