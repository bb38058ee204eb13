"""Two ranks timing all-reduces of several sizes, for the wire benchmarks
(``wire_checksum.py`` over loopback, ``curve_netns.py`` between two network namespaces).

:func:`run_pair` starts the two ranks, each running a small script that sets up what the
benchmark varies and then calls :func:`rank_main`; rank 0 prints the seconds per
all-reduce of every size as a ``RESULT`` line, which :func:`run_pair` returns.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "benchmarks")

__all__ = ["parse_size", "label", "rank_main", "run_pair"]


def parse_size(text: str) -> int:
    """``"4K"`` -> 4096, ``"4M"`` -> 4 MiB, ``"100"`` -> 100 bytes."""
    units = {"K": 1 << 10, "M": 1 << 20}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def label(size: int) -> str:
    """``"4 MiB"`` or ``"64 KiB"``."""
    return f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"


def rank_main(bytes_per_round: int, fill: str = "ones") -> None:
    """Inside a rank started by :func:`run_pair`: join the group, then for each size of
    ``sys.argv[1]`` all-reduce a float32 buffer of it (filled with ``np.ones`` or
    ``np.zeros``; zeros keep repeated sums finite) about ``bytes_per_round`` bytes' worth
    of times (the same count on both ranks), ``sys.argv[2]`` rounds; rank 0 prints the best
    round's seconds per all-reduce."""
    import numpy as np

    import disttorch.distributed as dist

    dist.init_process_group("gloo")
    out = {}
    for size in map(int, sys.argv[1].split(",")):
        x = getattr(np, fill)(size // 4, np.float32)
        for _ in range(3):
            dist.all_reduce(x)
        best, n = float("inf"), max(10, min(1000, bytes_per_round // size))
        for _ in range(int(sys.argv[2])):
            dist.barrier()
            start = time.perf_counter()
            for _ in range(n):
                dist.all_reduce(x)
            best = min(best, (time.perf_counter() - start) / n)
        out[size] = best
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps(out), flush=True)
    dist.destroy_process_group()


def run_pair(
    script: str,
    args: list[str],
    *,
    master: tuple[str, int],
    env: dict,
    rank_env: Callable[[int], dict] = lambda rank: {},
    wrap: Callable[[int, list[str]], list[str]] = lambda rank, argv: argv,
) -> dict[int, float]:
    """Run ``python -c script *args`` as ranks 0 and 1 (rank 0 listening at ``master``,
    PLAIN or CURVE as ``env`` says, tcp even on one host; ``rank_env(rank)`` added to its
    environment, its command line passed through ``wrap(rank, argv)``) and return rank
    0's seconds per all-reduce by size."""
    secret, procs = os.urandom(32).hex(), []
    for rank in range(2):
        full_env = dict(
            os.environ,
            PYTHONPATH=os.pathsep.join((ROOT, HERE)),
            RANK=str(rank),
            WORLD_SIZE="2",
            MASTER_ADDR=master[0],
            MASTER_PORT=str(master[1]),
            DISTTORCH_JOB_SECRET=secret,
            DISTTORCH_SAME_HOST_TRANSPORT="tcp",
            **env,
            **rank_env(rank),
        )
        argv = wrap(rank, [sys.executable, "-c", script, *args])
        procs.append(subprocess.Popen(argv, env=full_env, stdout=subprocess.PIPE, text=True))
    out = procs[0].communicate(timeout=600)[0]
    procs[1].wait(timeout=60)
    line = next(line for line in out.splitlines() if line.startswith("RESULT "))
    return {int(k): v for k, v in json.loads(line[len("RESULT ") :]).items()}
