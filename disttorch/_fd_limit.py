"""File descriptors against ``RLIMIT_NOFILE``: how many are open, a clear error before a
library would run out (libzmq aborts the process when its I/O thread cannot get one), and
one descriptor held in reserve so that a dying worker can still record why. Standard
library only."""

from __future__ import annotations

import errno
import os
from typing import Optional

_EXHAUSTED = (errno.EMFILE, errno.ENFILE)
_reserve: list[int] = []


def _soft_limit() -> Optional[int]:
    try:
        import resource
    except ImportError:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def open_count() -> Optional[int]:
    """How many file descriptors this process has open: every one its limit allows when
    none is left to list them with, ``None`` where it cannot tell (no ``/proc``)."""
    try:
        return len(os.listdir("/proc/self/fd")) - 1  # less the one listing them
    except OSError as error:
        return _soft_limit() if error.errno in _EXHAUSTED else None


def describe() -> str:
    """``"1021 file descriptors open, RLIMIT_NOFILE soft limit 1024"``."""
    count, soft = open_count(), _soft_limit()
    opened = f"{count} file descriptors open" if count is not None else "file descriptors open: unknown"
    return f"{opened}, RLIMIT_NOFILE soft limit {soft if soft is not None else 'unlimited'}"


def exhaustion_error(what: str) -> OSError:
    """The ``OSError(EMFILE)`` naming the limit, for ``what`` could not get a descriptor."""
    return OSError(
        errno.EMFILE,
        f"{what}: too few file descriptors left ({describe()}); raise the limit "
        "(ulimit -n, or resource.setrlimit(resource.RLIMIT_NOFILE, ...)) or close the files "
        "the program keeps open",
    )


def ensure_headroom(what: str, needed: int = 16) -> None:
    """Raise :func:`exhaustion_error` when fewer than ``needed`` descriptors are left under
    the soft limit (libzmq aborts the process instead of failing when it has none). It takes
    them and gives them back: the same cost however many are open (listing ``/proc/self/fd``
    took a millisecond per thousand), and no ``/proc`` needed."""
    if _soft_limit() is None:
        return
    held: list[int] = []
    try:
        for _ in range(needed):
            held.append(os.dup(held[0]) if held else os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))
    except OSError as error:
        if error.errno not in _EXHAUSTED:
            raise
    finally:
        for fd in held:
            os.close(fd)
    if len(held) < needed:  # (counted once they are given back)
        raise exhaustion_error(what)


def is_exhaustion(exc: BaseException) -> bool:
    """Whether ``exc``, or an exception it was raised from or during, is "Too many open files"."""
    seen: set[int] = set()
    current: Optional[BaseException] = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if getattr(current, "errno", None) in _EXHAUSTED:
            return True
        current = current.__cause__ or current.__context__
    return False


def reserve() -> None:
    """Hold one descriptor (of ``/dev/null``) for :func:`release` to free when the process
    has run out and must still write its error record."""
    if not _reserve:
        try:
            _reserve.append(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))
        except OSError:
            pass


def release() -> None:
    """Free the descriptor :func:`reserve` held."""
    while _reserve:
        os.close(_reserve.pop())
