"""The guardian: a small process that outlives the launcher to end the job's process tree.

The launcher's workers stop when it dies (``PR_SET_PDEATHSIG`` with SIGSTOP, in
``bootstrap``), but what *they* started (DataLoader workers, subprocesses) does not. So the
launcher starts a guardian, in its own session, and tells it the pid of every worker it
starts over a pipe. When the pipe closes (the launcher ended in any way, ``kill -9``
included), the guardian ends every process below each worker, then the worker, then every
process left in the workers' process groups (each worker leads its own), and removes the
launcher's own run directory. A worker is a child subreaper, so a process it started that
left its session (``start_new_session=True``) or lost its parent is still below it: the
stopped worker keeps its whole tree in place until the guardian has ended it. (A rank leaves no file of its own to sweep: its
shared memory is an anonymous ``memfd`` and its local sockets are abstract, so they vanish
with the last process that holds them.)

Protocol on the guardian's stdin: one line per worker, ``<pid>\\n``, or ``dir <path>\\n`` for a
directory to remove at the end; end of file = the end.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable

__all__ = ["GUARDIAN_PID_ENV", "Guardian", "descendants", "group_members"]

#: Tells a worker that its launcher has a guardian (its pid): the worker then stops, not dies,
#: with the launcher, for the guardian to end its tree (see ``reaper``).
GUARDIAN_PID_ENV = "DISTTORCH_GUARDIAN_PID"


def _stat(pid: str) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after ``pid (comm)``: state, ppid, pgrp, ..."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
    except OSError:
        return None
    return stat[stat.rfind(")") + 2 :].split()


def _processes() -> dict[int, list[str]]:
    """Every process's ``_stat`` fields, by pid."""
    found = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        fields = _stat(entry) if entry.isdigit() else None
        if fields is not None and len(fields) > 19:
            found[int(entry)] = fields
    return found


def group_members(pgids: Iterable[int]) -> set[int]:
    """The pids of the live processes whose process group is one of ``pgids`` (from /proc)."""
    wanted = {str(p) for p in pgids}
    return {pid for pid, fields in _processes().items() if fields[2] in wanted}


def descendants(roots: Iterable[int]) -> set[int]:
    """The pids of the processes below ``roots`` (their children, the children's, ...), zombies
    left out."""
    below: dict[str, list[int]] = {}
    for pid, fields in _processes().items():
        if fields[0] != "Z":
            below.setdefault(fields[1], []).append(pid)
    roots = set(roots)
    found, todo = set(), list(roots)
    while todo:
        for child in below.get(str(todo.pop()), ()):
            if child not in found and child not in roots:
                found.add(child)
                todo.append(child)
    return found


def start_time(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks after boot; ``None``: no such process). With
    the pid, it names one process even once the pid is reused."""
    fields = _stat(str(pid))
    return fields[19] if fields is not None and len(fields) > 19 else None


def stopped(pid: int) -> bool:
    """Is process ``pid`` stopped by a signal (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU: state ``T``)?
    A debugger's tracing stop (``t``) does not count."""
    fields = _stat(str(pid))
    return fields is not None and fields[0] == "T"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is dead for our purpose
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


class Guardian:
    """The launcher's handle on its guardian process (see the module docs)."""

    def __init__(self) -> None:
        self._told: list[str] = []  # every line sent, for a guardian started again
        self._proc = self._start()

    @staticmethod
    def _start() -> subprocess.Popen | None:
        try:
            return subprocess.Popen(
                # the file itself, isolated: the guardian needs the standard library only, so it
                # starts at once and nothing on the job's path (or disttorch's import) can break it
                [sys.executable, "-I", os.path.abspath(__file__)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
        except OSError:
            return None  # no guardian: the launcher's own teardown still runs

    def ensure_running(self) -> int | None:
        """Start the guardian again if it died (killed on its own: the workers stop rather than
        die with the launcher, so they need one), telling it every worker and directory once
        more. Returns the new guardian's pid, or ``None`` when it was running."""
        if self._proc is None or self._proc.poll() is None:
            return None
        self._proc = self._start()
        for line in self._told:
            self._write(line)
        return self.pid

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def watch(self, pid: int) -> None:
        """Tell the guardian about a worker (the leader of its own process group)."""
        self._send(str(pid))

    def _send(self, line: str) -> None:
        self._told.append(line)
        self._write(line)

    def _write(self, line: str) -> None:
        if self._proc is None:
            return
        try:
            self._proc.stdin.write(f"{line}\n".encode())
            self._proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass  # it died: ensure_running starts another

    def remove_at_end(self, path: str) -> None:
        """Have the guardian remove directory ``path`` when the launcher has ended."""
        self._send(f"dir {path}")

    def close(self, wait: float = 10.0) -> None:
        """End the guardian: it ends the workers' process groups once more and exits."""
        if self._proc is None:
            return
        try:
            self._proc.stdin.close()
            self._proc.wait(wait)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self._proc = None


def _signal_all(pids: Iterable[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            pass


def _end_trees(workers: dict[int, str], wait: float = 5.0) -> None:
    """Stop the workers still running (``pid -> start_time`` when told of them), end every
    process below them (stopped first, so none starts another meanwhile), then the workers."""
    live = {pid for pid, started in workers.items() if start_time(pid) == started}
    _signal_all(live, signal.SIGSTOP)
    deadline = time.monotonic() + wait
    while live and time.monotonic() < deadline:
        below = descendants(live)
        if not below:
            break
        _signal_all(below, signal.SIGSTOP)
        _signal_all(below, signal.SIGKILL)
        time.sleep(0.01)
    _signal_all(live, signal.SIGKILL)


def _end_groups(pgids: set[int], wait: float = 5.0) -> None:
    """SIGKILL every process of the groups ``pgids`` and wait (up to ``wait`` s) until they are gone."""
    deadline = time.monotonic() + wait
    while True:
        members = group_members(pgids)
        for pgid in pgids:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if not any(_alive(p) for p in members) or time.monotonic() > deadline:
            return
        time.sleep(0.05)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the launcher's to handle
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    pgids: set[int] = set()
    workers: dict[int, str] = {}  # pid -> its start time, read when the launcher named it
    directories = []
    for line in sys.stdin.buffer:
        text = line.decode("utf-8", "surrogateescape").rstrip("\n")
        if text.isdigit():
            pgids.add(int(text))
            started = start_time(int(text))
            if started is not None:
                workers[int(text)] = started
        elif text.startswith("dir "):
            directories.append(text[4:])
    _end_trees(workers)
    _end_groups(pgids)
    for directory in directories:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
