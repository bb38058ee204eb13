"""Start-up cost of disttorch-launch beside torchrun: launch N ranks, init the process group, barrier, exit.

Run by hand from the repository root::

    python benchmarks/launch.py [--nproc 4] [--repeats 5]

Four cases, each timed end to end (the whole launcher command, wall clock), best and median
of ``--repeats`` runs:

- ``disttorch-launch``, empty script: the launcher's own cost (start, spawn, watch, reap);
- ``disttorch-launch``, ``init_process_group()`` + ``barrier()``: what a training job waits for;
- ``torchrun``, empty script, and ``torchrun`` with gloo ``init_process_group`` + ``barrier``,
  when PyTorch is installed.

The ratio column is disttorch's time over torchrun's for the same case (lower is better).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional

ROOT = Path(__file__).resolve().parents[1]

EMPTY = "pass\n"
DISTTORCH_BARRIER = """\
import disttorch.distributed as dist
dist.init_process_group()
dist.barrier()
dist.destroy_process_group()
"""
TORCH_BARRIER = """\
import torch.distributed as dist
dist.init_process_group("gloo")
dist.barrier()
dist.destroy_process_group()
"""


def time_command(cmd: List[str], repeats: int) -> Optional[List[float]]:
    """Wall times of ``repeats`` runs of ``cmd``, or ``None`` if a run failed (its stderr is shown)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if result.returncode != 0:
            print(f"failed ({result.returncode}): {' '.join(cmd)}\n{result.stderr[-2000:]}", file=sys.stderr)
            return None
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nproc", type=int, default=4, help="ranks per job (default 4)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per case (default 5)")
    args = parser.parse_args()
    have_torch = importlib.util.find_spec("torch") is not None

    with tempfile.TemporaryDirectory() as tmp:
        scripts = {}
        for name, text in (("empty", EMPTY), ("disttorch", DISTTORCH_BARRIER), ("torch", TORCH_BARRIER)):
            scripts[name] = Path(tmp) / f"{name}.py"
            scripts[name].write_text(text)
        ours = [sys.executable, "-m", "launcher", "--nproc-per-node", str(args.nproc)]
        theirs = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(args.nproc)]
        cases = [("empty script", ours + [str(scripts["empty"])], theirs + [str(scripts["empty"])]),
                 ("init_process_group + barrier", ours + [str(scripts["disttorch"])],
                  theirs + [str(scripts["torch"])])]
        print(f"launch {args.nproc} ranks, {args.repeats} runs each, {os.cpu_count()} cores"
              + ("" if have_torch else " (PyTorch not installed: no torchrun column)"))
        header = f"{'case':<30} {'disttorch best':>14} {'median':>8} {'torchrun best':>14} {'median':>8} {'ratio':>7}"
        print(header)
        print("-" * len(header))
        for label, our_cmd, their_cmd in cases:
            mine = time_command(our_cmd, args.repeats)
            other = time_command(their_cmd, args.repeats) if have_torch else None
            cells = [f"{label:<30}"]
            for times in (mine, other):
                cells.append(f"{min(times):>13.3f}s {statistics.median(times):>7.3f}s" if times else f"{'-':>14} {'-':>8}")
            ratio = f"{statistics.median(mine) / statistics.median(other):>6.2f}x" if mine and other else f"{'-':>7}"
            print(" ".join(cells + [ratio]))


if __name__ == "__main__":
    main()
