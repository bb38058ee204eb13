"""Start-up cost of disttorch-launch beside torchrun: launch N ranks, init the process group, barrier, exit.

Run by hand from the repository root::

    python benchmarks/launch.py [--nproc 4] [--repeats 5]

Four cases, each timed end to end (the whole launcher command, wall clock), best and median
of ``--repeats`` runs:

- ``disttorch-launch``, empty script: the launcher's own cost (start, spawn, watch, reap);
- ``disttorch-launch``, ``init_process_group()`` + ``barrier()``: what a training job waits for;
- ``torchrun``, empty script, and ``torchrun`` with gloo ``init_process_group`` + ``barrier``,
  when PyTorch is installed.

The ratio column is disttorch's median wall time over torchrun's for the same case (lower is
better). The cpu columns (user + system time of the launcher and all its ranks) vary less than
wall time on a busy machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional, Tuple

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


def time_command(cmd: List[str], repeats: int) -> Optional[Tuple[List[float], List[float]]]:
    """Wall times and CPU times (user + system, the command and every process it waited for) of
    ``repeats`` runs of ``cmd``, or ``None`` if a run failed (its stderr is shown)."""
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    )
    walls, cpus = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        result = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if result.returncode != 0:
            print(f"failed ({result.returncode}): {' '.join(cmd)}\n{result.stderr[-2000:]}", file=sys.stderr)
            return None
    return walls, cpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nproc", type=int, default=4, help="ranks per job (default 4)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per case (default 5)")
    args = parser.parse_args()
    have_torch = importlib.util.find_spec("torch") is not None

    with tempfile.TemporaryDirectory() as tmp:
        scripts = {}
        for name, text in (("empty", EMPTY), ("disttorch", DISTTORCH_BARRIER), ("torch", TORCH_BARRIER)):
            scripts[name] = Path(tmp) / f"bench_{name}.py"  # not disttorch.py: it would shadow the package
            scripts[name].write_text(text)
        ours = [sys.executable, "-m", "disttorch.launcher", "--nproc-per-node", str(args.nproc)]
        theirs = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(args.nproc)]
        cases = [
            ("empty script", ours + [str(scripts["empty"])], theirs + [str(scripts["empty"])]),
            (
                "init_process_group + barrier",
                ours + [str(scripts["disttorch"])],
                theirs + [str(scripts["torch"])],
            ),
        ]
        print(
            f"launch {args.nproc} ranks, {args.repeats} runs each, {os.cpu_count()} cores, "
            f"load average {os.getloadavg()[0]:.1f}"
            + ("" if have_torch else " (PyTorch not installed: no torchrun column)")
        )
        print("wall: best and median seconds; cpu: median CPU seconds of the launcher and all its ranks")
        header = (
            f"{'case':<30} {'disttorch wall':>14} {'median':>7} {'cpu':>6} "
            f"{'torchrun wall':>14} {'median':>7} {'cpu':>6} {'ratio':>6}"
        )
        print(header)
        print("-" * len(header))
        for label, our_cmd, their_cmd in cases:
            mine = time_command(our_cmd, args.repeats)
            other = time_command(their_cmd, args.repeats) if have_torch else None
            cells = [f"{label:<30}"]
            for result in (mine, other):
                if result is None:
                    cells.append(f"{'-':>14} {'-':>7} {'-':>6}")
                else:
                    walls, cpus = result
                    cells.append(
                        f"{min(walls):>13.2f}s {statistics.median(walls):>6.2f}s "
                        f"{statistics.median(cpus):>5.2f}s"
                    )
            ratio = (
                f"{statistics.median(mine[0]) / statistics.median(other[0]):>5.2f}x"
                if mine and other
                else f"{'-':>6}"
            )
            print(" ".join(cells + [ratio]))


if __name__ == "__main__":
    main()
