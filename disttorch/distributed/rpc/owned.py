"""The values this worker owns on behalf of RRefs held by other workers, with their counts.

An entry is keyed by the RRef's id and holds the value's future (a ``remote()`` call may
still be computing it) and the number of *forks*: RRefs to it held by other workers. The
owner keeps the value while the count is above zero; each user RRef tells the owner when it
is deleted, and :func:`forget_all` drops everything at ``shutdown``. (The owner's own
``RRef`` objects hold the value directly, like any Python reference.)

A fork is counted before the RRef that makes it leaves its sender: by the owner itself
when it sends the RRef, or, when a user forwards it to a third worker, by a synchronous
call to the owner (``rref.py``). So a count never reaches zero while a fork is on its way.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ...futures import Future

__all__ = ["expect_value", "add_fork", "release_fork", "lookup", "forget_all", "count"]

RRefId = tuple[int, int]  # (id of the worker that made the RRef, its serial number there)


@dataclass
class _Entry:
    value: Future
    forks: int


_table: dict[RRefId, _Entry] = {}
_lock = threading.Lock()


def expect_value(rref_id: RRefId) -> Future:
    """The entry of a ``remote()`` call's RRef, counting the caller's fork (made by the
    caller when it is the owner, then found by the call's arrival); whoever runs the call
    fills its future."""
    with _lock:
        entry = _table.get(rref_id)
        if entry is None:
            entry = _table[rref_id] = _Entry(Future(), 1)
        return entry.value


def add_fork(rref_id: RRefId, value: Future | None = None) -> None:
    """Count one more fork of ``rref_id`` (making its entry from ``value`` if it has none)."""
    with _lock:
        entry = _table.get(rref_id)
        if entry is None:
            if value is None:
                raise RuntimeError(f"RRef {rref_id} is unknown at its owner (it was already deleted)")
            entry = _table[rref_id] = _Entry(value, 0)
        entry.forks += 1


def release_fork(rref_id: RRefId) -> None:
    """A fork was deleted; the entry goes with the last one."""
    with _lock:
        entry = _table.get(rref_id)
        if entry is not None:
            entry.forks -= 1
            if entry.forks <= 0:
                del _table[rref_id]


def lookup(rref_id: RRefId) -> Future:
    """The value future of an RRef this worker owns."""
    with _lock:
        entry = _table.get(rref_id)
    if entry is None:
        raise RuntimeError(f"RRef {rref_id} is unknown at its owner (it was already deleted)")
    return entry.value


def count() -> int:
    """How many values this worker keeps for other workers."""
    with _lock:
        return len(_table)


def forget_all() -> None:
    """Drop every entry (``shutdown``)."""
    with _lock:
        _table.clear()
