"""The children a process starts itself, recorded as it starts them.

A child subreaper (``reaper.py``) adopts the orphans of its descendants and must reap them, but
never a child it started itself: that child's exit status belongs to whoever started it
(``subprocess``, ``multiprocessing``, ``os.waitpid``). :func:`install` wraps every way Python
starts a direct child (``os.fork``, ``os.forkpty``, ``os.posix_spawn``, ``os.posix_spawnp``,
``_posixsubprocess.fork_exec`` under ``subprocess`` and ``multiprocessing``'s spawn and
forkserver, ``os.system``; ``os.spawn*``, ``os.popen`` and ``pty`` go through these) so that it
records the child (pid and start time); any other child was adopted. ``os.system`` does not tell
its child's pid: while one runs, no child counts as adopted.

A child that C code starts by itself (``fork`` through ``ctypes``, a C library's ``popen`` or
``fork``) is not recorded and counts as adopted: the reaper leaves it 0.1 s after its exit
(``reaper.ORPHAN_GRACE``), so a blocking ``waitpid`` gets its status, but a C caller that
looks later (a ``waitpid(WNOHANG)`` poll, once the process has a recorded child for the
reaper to wake for) fails with ``ECHILD``. No clean way tells the two apart: an adopted orphan's
``/proc/<pid>/stat`` names this process as its parent exactly as the C code's child's does,
and libc's ``fork`` runs no Python hook. Start children from Python (``os.fork``,
``subprocess``), or wait for a C-started child with a blocking ``waitpid``.
"""

from __future__ import annotations

import functools
import os
import threading
from contextlib import contextmanager
from typing import Callable, Dict, Iterator, Optional, Tuple

_lock = threading.RLock()  # re-entrant: a signal handler may start a child inside a recording
_owner = 0  # the process whose children are recorded (a fork's child records nothing)
_own: Dict[int, str] = {}  # pid -> start time of the children this process started
_starting = 0  # starts under way (a pid not recorded yet, or os.system's never known)
_kept = 0  # size of the record when it was last pruned
#: Set whenever this process has started a child (for a waiter that found it had none).
started = threading.Event()


def state_and_start(pid: int) -> Optional[Tuple[str, str]]:
    """``(state, start time)`` of process ``pid`` from /proc, or ``None`` if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # state, ppid, ..., start time is the 20th
    return (fields[0], fields[19]) if len(fields) > 19 else None


def _start_time(pid: int) -> Optional[str]:
    now = state_and_start(pid)
    return now[1] if now is not None else None


def _begin() -> None:
    global _starting
    with _lock:
        _starting += 1


def _end(pid: int) -> None:
    global _starting, _kept
    with _lock:
        _starting -= 1
        start = _start_time(pid) if pid > 0 else None
        if start is not None:
            _own[pid] = start
        if len(_own) > 2 * _kept + 64:  # forget the children that were reaped
            for gone in [p for p, s in _own.items() if _start_time(p) != s]:
                del _own[gone]
            _kept = len(_own)
    started.set()


def _recorded(start: Callable, pid_of: Callable[[object], int]) -> Callable:
    """``start`` (a function that starts a child) recording the child it starts."""

    @functools.wraps(start)
    def recording(*args, **kwargs):
        if os.getpid() != _owner:
            return start(*args, **kwargs)
        _begin()
        pid = 0
        try:
            result = start(*args, **kwargs)
            pid = pid_of(result)
            return result
        finally:
            if os.getpid() == _owner:  # not the child of a fork
                _end(pid)

    recording.__disttorch_records_children__ = True
    return recording


def install() -> None:
    """Record, from now on, every child this process starts (idempotent)."""
    global _owner
    import _posixsubprocess
    import subprocess

    _owner = os.getpid()
    starters = [
        (os, "fork", int),
        (os, "forkpty", lambda r: r[0]),
        (os, "posix_spawn", int),
        (os, "posix_spawnp", int),
        (os, "system", lambda r: 0),
        (_posixsubprocess, "fork_exec", int),
        (subprocess, "_fork_exec", int),  # subprocess's own name for _posixsubprocess.fork_exec
    ]
    for module, name, pid_of in starters:
        start = getattr(module, name, None)
        if start is not None and not getattr(start, "__disttorch_records_children__", False):
            setattr(module, name, _recorded(start, pid_of))


@contextmanager
def settled() -> Iterator[bool]:
    """Hold the record still; yields whether no start is under way, i.e. :func:`is_own`
    answers for every child of this process (``False``: ask again later)."""
    with _lock:
        yield _starting == 0


def is_own(pid: int) -> bool:
    """Whether child ``pid`` was started by this process (ask within :func:`settled`)."""
    start = _own.get(pid)
    return start is not None and start == _start_time(pid)
