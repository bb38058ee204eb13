"""Chrome trace events: see a training step as a timeline, one row per rank.

When the environment variable ``DISTTORCH_TRACE_DIR`` is set (``disttorch-launch
--trace-dir D`` sets it), each process records spans (forward, backward, optimiser step,
each all-reduce on the communication thread) and instants (a bucket's gradients ready)
and writes ``D/rank<k>.json`` at exit; the launcher merges those into ``D/trace.json``,
which Perfetto (ui.perfetto.dev) and chrome://tracing open.

``disttorch.profiler`` records into the same events while it runs: it adds a *sink*
(``add_sink``), which turns ``enabled`` on and receives every event but the timeline-only
spans (the whole backward pass and optimiser step), whether or not a trace directory is set.

With the variable unset and no profiler running, ``enabled`` is False and every call
returns at its first line: tracing off costs one attribute check.
"""

from __future__ import annotations

import atexit
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "add_sink",
    "begin",
    "enabled",
    "end",
    "flush",
    "instant",
    "profiling",
    "remove_sink",
    "span",
    "trace_dir",
]

trace_dir = os.environ.get("DISTTORCH_TRACE_DIR") or None
enabled = trace_dir is not None
_events: list[dict] = []
_sinks: list[list] = []  # the event lists of running profilers
_lock = threading.Lock()
_t0 = time.perf_counter()
_epoch_us = time.time() * 1e6  # wall clock at _t0, so ranks line up in the merged file


def _now_us() -> float:
    return _epoch_us + (time.perf_counter() - _t0) * 1e6


def _rank() -> int:
    return int(os.environ.get("RANK", "0"))


def _tid() -> str:
    return threading.current_thread().name


def _emit(event: dict, sinks: bool = True) -> None:
    with _lock:
        if trace_dir is not None:
            _events.append(event)
        if sinks:
            for sink in _sinks:
                sink.append(event)


def add_sink(events: list) -> None:
    """Start appending every event to ``events`` too (a profiler's list); turns tracing on."""
    global enabled
    with _lock:
        _sinks.append(events)
        enabled = True


def remove_sink(events: list) -> None:
    """Stop appending events to ``events``; tracing turns off unless a trace dir is set."""
    global enabled
    with _lock:
        _sinks[:] = [s for s in _sinks if s is not events]
        enabled = trace_dir is not None or bool(_sinks)


def profiling() -> bool:
    """Whether a profiler is recording (a span recorded only for profilers asks first)."""
    return bool(_sinks)


def begin(name: str, cat: str = "step", **args: Any) -> float | None:
    """Start a span now; returns its start time to pass to ``end`` (None when off)."""
    if not enabled:
        return None
    return _now_us()


def end(
    name: str, start: float | None, cat: str = "step", *, timeline_only: bool = False, **args: Any
) -> None:
    """Close a span started by ``begin``. ``timeline_only``: a span of the trace directory's
    timeline alone (the backward pass, the optimiser step), which profilers do not receive:
    they record these parts as PyTorch's profiler names them."""
    if not enabled or start is None:
        return
    _emit(
        {
            "name": name,
            "cat": cat,
            "ph": "X",
            "ts": start,
            "dur": _now_us() - start,
            "pid": _rank(),
            "tid": _tid(),
            "args": args,
        },
        not timeline_only,
    )


@contextmanager
def span(name: str, cat: str = "step", **args: Any) -> Iterator[None]:
    """Record the time spent in the ``with`` block as one span."""
    if not enabled:
        yield
        return
    start = _now_us()
    try:
        yield
    finally:
        end(name, start, cat, **args)


def instant(name: str, cat: str = "step", **args: Any) -> None:
    """Record a moment (e.g. "bucket 3 ready")."""
    if not enabled:
        return
    _emit(
        {
            "name": name,
            "cat": cat,
            "ph": "i",
            "s": "t",
            "ts": _now_us(),
            "pid": _rank(),
            "tid": _tid(),
            "args": args,
        }
    )


def flush() -> str | None:
    """Write this rank's events to ``<trace dir>/rank<k>.json``; returns the path.

    A process that recorded nothing writes nothing (``None``): the launcher's bootstrap
    loads disttorch in every worker, also in programs that write their own trace file.
    """
    if trace_dir is None:
        return None
    with _lock:
        events = list(_events)
    if not events:
        return None
    os.makedirs(trace_dir, exist_ok=True)
    path = os.path.join(trace_dir, f"rank{_rank()}.json")
    meta = [{"name": "process_name", "ph": "M", "pid": _rank(), "args": {"name": f"rank {_rank()}"}}]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"traceEvents": meta + events, "displayTimeUnit": "ms"}, f)
    os.replace(tmp, path)
    return path


if enabled:
    atexit.register(flush)
