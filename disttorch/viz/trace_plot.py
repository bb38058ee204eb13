"""Draw a merged Chrome trace (``disttorch-launch --trace-dir D`` writes ``D/trace.json``) as a PNG.

One band per rank, two lanes each: the training thread (forward, backward, waiting for
the gradient buckets, optimiser step; a tick where a bucket's gradients are ready) and
the communication thread (each bucket's all-reduce). A span goes on the lane of the thread
that ran it: DDP's last bucket is usually reduced by the training thread itself, at the
end of backward, so its all-reduce shows on the training lane. Reading across the bands
shows whether the ranks keep in step and how much of the all-reduce hides behind backward.

Needs matplotlib (``pip install 'disttorch[plot]'``); imported only when drawing.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

__all__ = ["load_trace", "plot_trace", "Span"]

#: (match on the event name, legend label, colour); the first match wins.
KINDS = (
    ("forward", "forward", "#4C72B0"),
    ("backward", "backward", "#DD8452"),
    ("wait for buckets", "wait for buckets", "#B0B0B0"),
    ("optimizer.step", "optimizer step", "#55A868"),
    ("all_reduce", "all-reduce", "#C44E52"),
)
OTHER = ("other", "#8172B3")
#: Up to this many steps the spans get white edges and buckets their ticks; over more they blur.
FINE_STEPS = 20


@dataclass
class Span:
    """One event of the trace, in milliseconds from the start of the trace."""

    rank: int
    comm: bool  # ran on a communication thread
    name: str
    start: float
    duration: float  # 0 for an instant


def _median_duration(bars: list[tuple[float, float]]) -> float:
    return sorted(d for _, d in bars)[len(bars) // 2]


def _kind(name: str) -> tuple[str, str]:
    for match, label, colour in KINDS:
        if name.startswith(match):
            return label, colour
    return OTHER


def load_trace(path: str | os.PathLike) -> list[Span]:
    """The spans and instants of a merged trace (a file, or a trace directory holding ``trace.json``).

    Raises:
        FileNotFoundError: no trace there.
        ValueError: the file holds no trace events.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        path = os.path.join(path, "trace.json")
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    events = data.get("traceEvents", []) if isinstance(data, dict) else data
    threads = {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name"
    }
    timed = [e for e in events if e.get("ph") in ("X", "i", "I")]
    if not timed:
        raise ValueError(
            f"{path}: no timed trace events (expected spans 'ph': 'X' or instants 'ph': 'i'); "
            f"was the job run with --trace-dir and did it train at least one step?"
        )
    t0 = min(e["ts"] for e in timed)
    spans = []
    for e in timed:
        thread = str(threads.get((e["pid"], e["tid"]), e["tid"]))
        comm = "pg" in thread  # process groups name their threads disttorch-pg<id>-rank<r>
        spans.append(
            Span(
                int(e["pid"]),
                comm,
                e["name"],
                (e["ts"] - t0) / 1e3,
                e.get("dur", 0.0) / 1e3 if e["ph"] == "X" else 0.0,
            )
        )
    return spans


def last_steps(spans: list[Span], steps: int | None) -> list[Span]:
    """Each rank's spans from the start of its ``steps``-th last forward on (all if None)."""
    if not steps:
        return spans
    kept = []
    for rank in sorted({s.rank for s in spans}):
        mine = [s for s in spans if s.rank == rank]
        starts = sorted(s.start for s in mine if s.name == "forward")
        cut = starts[-steps] if len(starts) > steps else float("-inf")
        kept += [s for s in mine if s.start >= cut]
    return kept


def plot_trace(
    path: str | os.PathLike, out: str | os.PathLike, steps: int | None = 3, title: str | None = None
) -> str:
    """Render the trace at ``path`` to the PNG ``out``; returns ``out``.

    Args:
        path: a merged ``trace.json``, or the trace directory holding it.
        out: the PNG to write.
        steps: show only the last ``steps`` training steps (None or 0: everything; over
            ``FINE_STEPS`` steps the spans lose their edges and the bucket ticks are left out).
        title: the figure's title (default: says what is shown).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    spans = last_steps(load_trace(path), steps)
    ranks = sorted({s.rank for s in spans})
    x0 = min(s.start for s in spans)
    shown_steps = max(sum(s.name == "forward" and s.rank == r for s in spans) for r in ranks)
    # Over many steps, a span is a sliver: its white edge and the bucket ticks would cover it in black.
    fine = shown_steps <= FINE_STEPS
    fig, ax = plt.subplots(figsize=(12, 1.3 + 0.75 * len(ranks)), dpi=110)
    lane_h, used = 0.34, {}
    for band, rank in enumerate(ranks):
        base = (len(ranks) - 1 - band) * 1.0  # rank 0 on top
        bars: dict[tuple[float, str], list[tuple[float, float]]] = {}  # (lane, kind) -> spans
        ticks = []
        for s in spans:
            if s.rank != rank:
                continue
            label, colour = _kind(s.name)
            if s.duration > 0:
                bars.setdefault((base + (0.08 if s.comm else 0.5), label), []).append(
                    (s.start - x0, s.duration)
                )
                used[label] = colour
            elif s.name.startswith("bucket") and fine:
                ticks.append(s.start - x0)
                used["bucket ready"] = "black"
        # one call per lane and kind; the longer kinds first, so that a span nested in another
        # (waiting inside backward) is drawn on top
        for (y, label), xs in sorted(bars.items(), key=lambda item: -_median_duration(item[1])):
            ax.broken_barh(
                xs,
                (y, lane_h),
                facecolors=used[label],
                edgecolors="white" if fine else "none",
                linewidth=0.4 if fine else 0,
            )
        if ticks:
            ax.vlines(ticks, base + 0.5, base + 0.5 + lane_h, color="black", linewidth=1.2)
    ax.set_yticks([(len(ranks) - 1 - b) + t for b in range(len(ranks)) for t in (0.25, 0.67)])
    ax.set_yticklabels([f"rank {r} {lane}" for r in ranks for lane in ("comm", "main")], fontsize=8)
    ax.set_ylim(-0.05, len(ranks))
    for b in range(1, len(ranks)):
        ax.axhline(b - 0.02, color="#DDDDDD", linewidth=0.8)
    ax.set_xlim(0, max(s.start + s.duration for s in spans) - x0)
    ax.set_xlabel("time (ms)")
    if not steps:
        shown = f"whole run ({shown_steps} steps)"
    else:
        shown = "last step" if steps == 1 else f"last {steps} steps"
    handles = [Patch(color=c, label=name) for _, name, c in KINDS + (("",) + OTHER,) if name in used]
    if "bucket ready" in used:
        handles.append(plt.Line2D([], [], color="black", linewidth=1.2, label="bucket ready"))
    ax.legend(
        handles=handles,
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncol=len(handles),
        fontsize=8,
        frameon=False,
    )
    fig.suptitle(
        title or f"one row per rank: training thread (main) and communication thread (comm), {shown}",
        fontsize=10,
    )
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return os.fspath(out)
