"""Whether another process is stopped by a signal, from Linux's ``/proc``."""

from __future__ import annotations


def stopped_by_signal(pid: int) -> bool:
    """Whether ``pid`` is stopped by a signal (SIGSTOP, SIGTSTP: state ``T`` in
    ``/proc/PID/stat``; a debugger's stop is ``t``). False where ``/proc`` cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    end = stat.rfind(b")")  # the command name may hold spaces and parentheses
    return stat[end + 2 : end + 3] == b"T"
