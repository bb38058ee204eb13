"""Fault injection: kill, delay, cut off or fail a rank at a chosen step or collective.

Faults are described in the environment variable ``DISTTORCH_FAULT`` (the launcher's
``--inject-fault SPEC`` option, which may be repeated, fills it in). disttorch calls
:func:`maybe_inject` at every collective and every training step; when a fault matches
this rank, event and count, it fires, once.

Format (several faults are joined with ``;``)::

    ACTION:key=value[:key=value...]          (``,`` may stand for ``:``)

    kill:rank=1:at=collective:5        rank 1 kills itself with SIGKILL at its 5th collective
    kill:rank=1,step=5                 the same at step 5 (``EVENT=N`` is short for ``at=EVENT:N``)
    delay:rank=2:seconds=3:at=step:2   rank 2 sleeps 3 s at step 2
    drop:rank=1:at=collective:3        rank 1 closes its peer connections at its 3rd collective
    raise:rank=0:at=step:4             rank 0 raises RuntimeError at step 4

Keys:

- ``rank=R``: the global rank (``RANK``) the fault is for; left out, every rank.
- ``at=EVENT:N``: fire at the N-th event, counted from 1. Events: ``step``, ``collective``.
- ``seconds=S``: how long ``delay`` sleeps (required for ``delay``).
- ``signal=NAME``: the signal ``kill`` sends itself (default ``SIGKILL``).
- ``attempt=K``: the restart count (``DISTTORCH_RESTART_COUNT``) on which the fault fires;
  default ``0``, the first run only, so a group restarted by ``--max-restarts`` runs clean;
  ``attempt=*`` fires on every attempt.

``drop`` calls the functions registered with :func:`register_drop_handler` (the transport
registers one that closes its sockets). ``kill`` first writes the fault to the rank's error
file so the launcher's failure summary says the death was injected.

Standard library only; when no fault is configured, :func:`maybe_inject` is one comparison.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from dataclasses import dataclass
from typing import Callable, List, Optional

from ._error_file import write_error_file

FAULT_ENV = "DISTTORCH_FAULT"
ACTIONS = ("kill", "delay", "drop", "raise")
EVENTS = ("step", "collective")
_KEYS = {
    "kill": {"rank", "at", "attempt", "signal"},
    "delay": {"rank", "at", "attempt", "seconds"},
    "drop": {"rank", "at", "attempt"},
    "raise": {"rank", "at", "attempt"},
}


@dataclass(frozen=True)
class Fault:
    """One parsed fault: do ``action`` on ``rank`` (``None``: all) at the ``count``-th ``event``."""

    action: str
    event: str
    count: int
    rank: Optional[int] = None
    attempt: Optional[int] = 0
    seconds: float = 0.0
    signal: int = int(signal.SIGKILL)
    spec: str = ""

    def describe(self) -> str:
        """A short human description, e.g. ``"kill (SIGKILL) at collective 5"``."""
        what = {
            "kill": f"kill ({signal.Signals(self.signal).name})",
            "delay": f"delay of {self.seconds:g} s",
            "drop": "dropped connections",
            "raise": "raised RuntimeError",
        }[self.action]
        return f"{what} at {self.event} {self.count}"


def _int(value: str, key: str, spec: str, minimum: int) -> int:
    try:
        number = int(value)
    except ValueError:
        number = minimum - 1
    if number < minimum:
        raise ValueError(f"fault {spec!r}: {key}={value!r} must be an integer >= {minimum}")
    return number


def _parse_one(spec: str) -> Fault:
    tokens = [t.strip() for t in re.split(r"[:,]", spec)]
    action = tokens[0]
    if action not in ACTIONS:
        raise ValueError(f"fault {spec!r}: unknown action {action!r}; expected one of {', '.join(ACTIONS)}")
    fields: dict = {"action": action, "spec": spec}
    i = 1
    while i < len(tokens):
        token = tokens[i]
        key, eq, value = token.partition("=")
        if not eq:
            raise ValueError(
                f"fault {spec!r}: expected key=value, got {token!r} (example: kill:rank=1:at=collective:5)"
            )
        if key in EVENTS:  # shorthand: step=5 means at=step:5
            tokens.insert(i + 1, value)
            key, value = "at", key
        if key not in _KEYS[action]:
            raise ValueError(
                f"fault {spec!r}: key {key!r} does not apply to {action!r}; "
                f"expected {', '.join(sorted(_KEYS[action]))}"
            )
        if key == "at":
            if value not in EVENTS:
                raise ValueError(
                    f"fault {spec!r}: unknown event {value!r}; expected one of {', '.join(EVENTS)}"
                )
            if i + 1 >= len(tokens):
                raise ValueError(f"fault {spec!r}: at={value} needs a count, e.g. at={value}:5")
            fields["event"] = value
            fields["count"] = _int(tokens[i + 1], "count", spec, 1)
            i += 1
        elif key == "rank":
            fields["rank"] = _int(value, key, spec, 0)
        elif key == "attempt":
            fields["attempt"] = None if value == "*" else _int(value, key, spec, 0)
        elif key == "seconds":
            try:
                fields["seconds"] = float(value)
            except ValueError:
                fields["seconds"] = -1.0
            if not fields["seconds"] >= 0:
                raise ValueError(f"fault {spec!r}: seconds={value!r} must be a number >= 0")
        elif key == "signal":
            name = value.upper() if value.upper().startswith("SIG") else "SIG" + value.upper()
            if name not in signal.Signals.__members__:
                raise ValueError(f"fault {spec!r}: unknown signal {value!r}, e.g. SIGKILL or SIGTERM")
            fields["signal"] = int(signal.Signals[name])
        i += 1
    if "event" not in fields:
        raise ValueError(f"fault {spec!r}: missing at=EVENT:N (e.g. at=step:5 or at=collective:3)")
    if action == "delay" and "seconds" not in fields:
        raise ValueError(f"fault {spec!r}: delay needs seconds=S")
    return Fault(**fields)


def parse_faults(text: str) -> List[Fault]:
    """Parse a ``;``-separated list of fault specs (the format above).

    Raises:
        ValueError: naming the bad spec, what was wrong and what was expected.
    """
    return [_parse_one(part.strip()) for part in text.split(";") if part.strip()]


_pending: Optional[List[Fault]] = None  # faults for this rank and attempt; None until loaded
_counters: dict = {}
_drop_handlers: List[Callable[[Fault], None]] = []


def configure(text: Optional[str] = None) -> List[Fault]:
    """(Re)load the faults for this process from ``text``, or from ``DISTTORCH_FAULT`` if ``None``.

    Only faults for this process's ``RANK`` and restart count are kept. Returns them.
    """
    global _pending
    if text is None:
        text = os.environ.get(FAULT_ENV, "")
    rank = int(os.environ.get("RANK", "0"))
    attempt = int(os.environ.get("DISTTORCH_RESTART_COUNT", "0"))
    _pending = [f for f in parse_faults(text) if f.rank in (None, rank) and f.attempt in (None, attempt)]
    _counters.clear()
    return list(_pending)


def register_drop_handler(fn: Callable[[Fault], None]) -> None:
    """Register ``fn(fault)`` to be called when a ``drop`` fault fires (it should close connections)."""
    _drop_handlers.append(fn)


def unregister_drop_handler(fn: Callable[[Fault], None]) -> None:
    """Remove a handler added with :func:`register_drop_handler` (e.g. when a transport closes)."""
    if fn in _drop_handlers:
        _drop_handlers.remove(fn)


def maybe_inject(event: str, count: Optional[int] = None) -> None:
    """Fire any configured fault for this rank at the ``count``-th ``event``.

    Args:
        event: ``"step"`` or ``"collective"``.
        count: which one this is, counted from 1 (the first collective is 1). If ``None``,
            this module counts the calls for ``event`` itself.
    """
    pending = _pending if _pending is not None else configure()
    if not pending:
        return
    if count is None:
        count = _counters[event] = _counters.get(event, 0) + 1
    for fault in [f for f in pending if f.event == event and f.count == count]:
        pending.remove(fault)
        _fire(fault)


def _say(message: str) -> None:
    print(f"[disttorch fault] rank {os.environ.get('RANK', '?')}: {message}", file=sys.stderr, flush=True)


def _fire(fault: Fault) -> None:
    where = f"injected fault {fault.spec!r} ({FAULT_ENV}): {fault.describe()}"
    if fault.action == "kill":
        _say(where)
        write_error_file("fault", where, fault=fault.spec, event=fault.event, count=fault.count)
        os.kill(os.getpid(), fault.signal)
        time.sleep(5.0)  # a catchable signal may take a moment to be delivered
    elif fault.action == "delay":
        _say(where)
        time.sleep(fault.seconds)
    elif fault.action == "drop":
        if not _drop_handlers:
            _say(f"{where}, but no transport registered a drop handler: nothing was dropped")
            return
        _say(where)
        for handler in list(_drop_handlers):
            handler(fault)
    else:
        raise RuntimeError(where)
