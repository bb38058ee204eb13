"""``python -m disttorch.viz`` / ``disttorch-plot``: render a trace or loss curves to PNG.

    disttorch-plot traces/trace.json --out trace.png       # merged trace, one row per rank
    disttorch-plot traces --out trace.png --steps 5         # a trace directory works too
    disttorch-plot metrics --out loss.png                   # a --log-metrics directory

What to draw is decided by what ``path`` holds: a ``.json`` trace (or a directory with
``trace.json``) gives the timeline, a directory of ``rank<k>.jsonl`` files the loss curves.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Optional, Sequence


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="disttorch-plot",
        description="Render a merged trace or per-rank loss curves to PNG.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.split("\n")[2:]),
    )
    p.add_argument("path", help="a merged trace (trace.json or its directory) or a --log-metrics directory")
    p.add_argument("--out", "-o", required=True, help="the PNG file to write")
    p.add_argument(
        "--steps", type=int, default=3, help="trace: show the last N training steps; 0 = all (default 3)"
    )
    p.add_argument("--key", default="loss", help="metrics: the value to plot (default loss)")
    p.add_argument("--title", default=None, help="the figure's title")
    return p


def _is_metrics_dir(path: str) -> bool:
    return os.path.isdir(path) and any(
        n.startswith("rank") and n.endswith(".jsonl") for n in os.listdir(path)
    )


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.steps < 0:
        parser.error(f"--steps: expected 0 (the whole run) or a number of steps >= 1, got {args.steps}")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("disttorch-plot needs matplotlib: pip install 'disttorch[plot]'", file=sys.stderr)
        return 1
    try:
        if _is_metrics_dir(args.path):
            from .loss_plot import plot_loss

            out = plot_loss(args.path, args.out, key=args.key, title=args.title)
        else:
            from .trace_plot import plot_trace

            out = plot_trace(args.path, args.out, steps=args.steps or None, title=args.title)
    except (OSError, ValueError) as exc:
        print(f"disttorch-plot: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
