"""Merges the per-rank Chrome trace files of a job into one file with a row per rank.

Each rank writes ``<dir>/rank<k>.json`` (a JSON array of trace events, or an object with
``"traceEvents"``). :func:`merge_traces` writes ``<dir>/trace.json``: every event of rank k
gets ``pid = k``, and metadata events name the row ``"rank k"`` and sort rows by rank, so
Perfetto (https://ui.perfetto.dev) and chrome://tracing show one row per rank. Threads
given as names (``"tid": "comm"``) get a number and a ``thread_name`` record, as the
format expects numbers.

A file cut short (its rank was killed while writing) is read up to its last whole event.
Run by hand: ``python -m disttorch.launcher.trace_merge DIR``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import List, Optional

_RANK_FILE = re.compile(r"^rank(\d+)\.json$")
_NAMED_THREADS = 1_000_000  # numbers given to threads that a rank named by a string


def _load_events(path: str) -> List[dict]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        data = json.loads(text)
    except ValueError:
        data = _load_truncated(text)
    events = data.get("traceEvents", []) if isinstance(data, dict) else data
    if not isinstance(events, list):
        raise ValueError(
            f"{path}: expected a JSON array of trace events or {{'traceEvents': [...]}}, "
            f"got {type(events).__name__}"
        )
    return [e for e in events if isinstance(e, dict)]


def _load_truncated(text: str) -> List[dict]:
    """Events of a JSON array cut off mid-way (the Chrome format allows a missing ``]``)."""
    start = text.find("[")
    if start < 0:
        raise ValueError("no JSON array of trace events found")
    decoder = json.JSONDecoder()
    events, pos = [], start + 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        try:
            event, pos = decoder.raw_decode(text, pos)
        except ValueError:
            return events
        events.append(event)


def prepare_trace_dir(trace_dir: str) -> None:
    """Create ``trace_dir`` and remove rank files left by an earlier run (they would be merged too)."""
    os.makedirs(trace_dir, exist_ok=True)
    for name in os.listdir(trace_dir):
        if _RANK_FILE.match(name):
            os.remove(os.path.join(trace_dir, name))


def merge_traces(trace_dir: str, out_name: str = "trace.json") -> Optional[str]:
    """Merge ``trace_dir/rank<k>.json`` into ``trace_dir/out_name``, one row (pid) per rank.

    Args:
        trace_dir: the directory the ranks wrote their traces to.
        out_name: the merged file's name inside ``trace_dir``.

    Returns:
        The merged file's path, or ``None`` if there was no rank file.

    Raises:
        ValueError: if a rank file holds something other than trace events.
    """
    if not os.path.isdir(trace_dir):
        return None
    ranks = sorted((int(m.group(1)), name) for name in os.listdir(trace_dir) if (m := _RANK_FILE.match(name)))
    if not ranks:
        return None
    merged: List[dict] = []
    for rank, name in ranks:
        merged.append(
            {"name": "process_name", "ph": "M", "pid": rank, "tid": 0, "args": {"name": f"rank {rank}"}}
        )
        merged.append(
            {"name": "process_sort_index", "ph": "M", "pid": rank, "tid": 0, "args": {"sort_index": rank}}
        )
        thread_ids: dict = {}  # a thread named by a string gets a number and a thread_name record
        for event in _load_events(os.path.join(trace_dir, name)):
            if event.get("ph") == "M" and event.get("name") in ("process_name", "process_sort_index"):
                continue  # ours above name the row
            tid = event.get("tid", 0)
            if not isinstance(tid, int):
                if tid not in thread_ids:
                    thread_ids[tid] = _NAMED_THREADS + len(thread_ids)
                    merged.append(
                        {
                            "name": "thread_name",
                            "ph": "M",
                            "pid": rank,
                            "tid": thread_ids[tid],
                            "args": {"name": str(tid)},
                        }
                    )
                tid = thread_ids[tid]
            merged.append({**event, "pid": rank, "tid": tid})
    out = os.path.join(trace_dir, out_name)
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"traceEvents": merged, "displayTimeUnit": "ms"}, f)
    os.replace(tmp, out)
    return out


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m disttorch.launcher.trace_merge DIR``: merge DIR/rank*.json into DIR/trace.json."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m disttorch.launcher.trace_merge TRACE_DIR", file=sys.stderr)
        return 2
    out = merge_traces(args[0])
    if out is None:
        print(f"no rank<k>.json files in {args[0]}", file=sys.stderr)
        return 1
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
