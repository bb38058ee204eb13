"""The guardian: a small process that outlives the launcher to end the job's process tree.

The launcher's workers already die with it (``PR_SET_PDEATHSIG`` in ``bootstrap``), but what
*they* started (DataLoader workers, subprocesses) does not, and a rank killed during
``init_process_group`` may leave the files it had made (shared-memory rings in ``/dev/shm``
named ``disttorch-<pid>-...``, an ipc socket directory ``disttorch-ipc-<pid>-...`` in the
temporary directory). So the launcher starts a guardian, in its own session, and tells it
the pid of every worker it starts over a pipe. When the pipe closes (the launcher ended in
any way, ``kill -9`` included), the guardian SIGKILLs every process in the workers' process
groups (each worker leads its own) and removes the files of those processes and the
launcher's own run directory.

The launcher also calls :func:`sweep_files` itself after each attempt, for the ranks of
that attempt (the guardian is the safety net for when it cannot).

Protocol on the guardian's stdin: one line per worker, ``<pid>\\n``, or ``dir <path>\\n`` for a
directory to remove at the end; end of file = the end.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable

__all__ = ["Guardian", "group_members", "sweep_files"]

_SHM_DIR = "/dev/shm"


def group_members(pgids: Iterable[int]) -> set[int]:
    """The pids of the live processes whose process group is one of ``pgids`` (from /proc)."""
    wanted = {str(p) for p in pgids}
    found = set()
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()  # state, ppid, pgrp, ...
        if len(fields) > 2 and fields[2] in wanted:
            found.add(int(entry))
    return found


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


def sweep_files(pids: Iterable[int], tmpdir: str | None = None) -> int:
    """Remove the shared-memory rings and ipc directories of ``pids`` that are no longer
    running. Returns how many entries were removed."""
    places = {tmpdir or tempfile.gettempdir(), "/tmp"}  # /tmp: where too deep a TMPDIR falls back
    removed = 0
    for pid in pids:
        if _alive(pid):
            continue
        for ring in glob.glob(os.path.join(_SHM_DIR, f"disttorch-{pid}-*")):
            try:
                os.unlink(ring)
                removed += 1
            except OSError:
                pass
        for tmp in places:
            for directory in glob.glob(os.path.join(tmp, f"disttorch-ipc-{pid}-*")):
                shutil.rmtree(directory, ignore_errors=True)
                removed += 1
    return removed


class Guardian:
    """The launcher's handle on its guardian process (see the module docs)."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "disttorch.launcher.guardian"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
                env=dict(os.environ, PYTHONPATH=_launcher_path()),
            )
        except OSError:
            self._proc = None  # no guardian: the launcher's own teardown still runs

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def watch(self, pid: int) -> None:
        """Tell the guardian about a worker (the leader of its own process group)."""
        self._send(str(pid))

    def _send(self, line: str) -> None:
        if self._proc is None:
            return
        try:
            self._proc.stdin.write(f"{line}\n".encode())
            self._proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            self._proc = None

    def remove_at_end(self, path: str) -> None:
        """Have the guardian remove directory ``path`` when the launcher has ended."""
        self._send(f"dir {path}")

    def close(self, wait: float = 10.0) -> None:
        """End the guardian: it sweeps once more and exits."""
        if self._proc is None:
            return
        try:
            self._proc.stdin.close()
            self._proc.wait(wait)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self._proc = None


def _launcher_path() -> str:
    """PYTHONPATH with the directory that holds this module's top-level package (``disttorch``
    or ``launcher``) first; never the package directory itself, whose modules (``random``,
    ``signal``) would shadow the standard library's."""
    top = sys.modules[__name__.split(".")[0]]
    here = os.path.dirname(os.path.dirname(os.path.abspath(top.__file__)))
    return os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH", "")) if p)


def _end_groups(pgids: set[int], wait: float = 5.0) -> set[int]:
    """SIGKILL every process of the groups ``pgids``; return every pid seen in them."""
    seen: set[int] = set(pgids)
    deadline = time.monotonic() + wait
    while True:
        members = group_members(pgids)
        seen |= members
        for pgid in pgids:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if not any(_alive(p) for p in members) or time.monotonic() > deadline:
            return seen
        time.sleep(0.05)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the launcher's to handle
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    pgids: set[int] = set()
    directories = []
    for line in sys.stdin.buffer:
        text = line.decode("utf-8", "surrogateescape").rstrip("\n")
        if text.isdigit():
            pgids.add(int(text))
        elif text.startswith("dir "):
            directories.append(text[4:])
    sweep_files(_end_groups(pgids))
    for directory in directories:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
