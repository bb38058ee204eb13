"""Whether another process is stopped by a signal or has ended, and when it started, from
Linux's ``/proc``."""

from __future__ import annotations

import os


def _fields(pid: int) -> list[bytes]:
    """The fields of ``/proc/PID/stat`` after the command name (from the state on); empty where
    ``/proc`` cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return []
    return stat[stat.rfind(b")") + 2 :].split()  # the command name may hold spaces and parentheses


def stopped_by_signal(pid: int) -> bool:
    """Whether ``pid`` is stopped by a signal (SIGSTOP, SIGTSTP: state ``T`` in
    ``/proc/PID/stat``; a debugger's stop is ``t``). False where ``/proc`` cannot tell."""
    fields = _fields(pid)
    return bool(fields) and fields[0] == b"T"


def start_time(pid: int) -> str | None:
    """When ``pid`` (of this pid namespace) started, in clock ticks since boot: with its pid it
    names one process. ``None`` for no running process (a zombie's is gone) or where ``/proc``
    cannot tell."""
    fields = _fields(pid)
    return fields[19].decode() if len(fields) > 19 and fields[0] not in (b"Z", b"X") else None


def ended(pid: int) -> bool:
    """Whether ``pid`` has ended (no such process, or a zombie). False where ``/proc`` cannot
    tell (no ``/proc``)."""
    if not os.path.isdir("/proc/self"):
        return False
    fields = _fields(pid)
    return not fields or fields[0] in (b"Z", b"X")
