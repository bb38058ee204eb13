"""Per-op overhead of a small training step: the loss, activation and layer calls of an MLP's
step on a batch of 128 (forward, or forward + backward), beside PyTorch (CPU, one thread) in
the same run. At these sizes an op's time is mostly its Python (checks, autograd nodes, NumPy
calls): the serial part of a step, which threads cannot shorten.

    python benchmarks/small_ops.py                # median of --calls calls per case
    python benchmarks/small_ops.py --calls 5000

Prints one row per case: disttorch us, torch us and the ratio (disttorch / torch; <1 is
faster). Without PyTorch only the disttorch column is printed. The two libraries take turns
case by case; on a loaded machine run it under ``chrt -f 10`` (root) and compare medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from machine import describe, peer_torch, prepare_blas  # noqa: E402

prepare_blas()  # one thread, OpenBLAS's own kernels: before NumPy and PyTorch load

import numpy as np  # noqa: E402

import disttorch  # noqa: E402

R = np.random.default_rng(0)
LOGITS = R.standard_normal((128, 10)).astype(np.float32)
TARGET = R.integers(0, 10, 128)
HIDDEN = R.standard_normal((128, 256)).astype(np.float32)


def _cases(lib: Any) -> dict[str, Callable[[], Any]]:
    """Each case's call in library ``lib``, on tensors made once."""
    F = lib.nn.functional
    logits = lib.tensor(LOGITS, requires_grad=True)
    log_probs = lib.tensor(F.log_softmax(lib.tensor(LOGITS), 1).numpy(), requires_grad=True)
    target = lib.tensor(TARGET)
    hidden = lib.tensor(HIDDEN, requires_grad=True)
    lib.manual_seed(0)
    layer = lib.nn.Linear(256, 10)
    return {
        "cross_entropy (128, 10) fwd": lambda: F.cross_entropy(logits, target),
        "cross_entropy (128, 10) fwd+bwd": lambda: F.cross_entropy(logits, target).backward(),
        "nll_loss (128, 10) fwd+bwd": lambda: F.nll_loss(log_probs, target).backward(),
        "log_softmax (128, 10) fwd": lambda: F.log_softmax(logits, 1),
        "relu (128, 256) + sum fwd+bwd": lambda: F.relu(hidden).sum().backward(),
        "linear 256->10 + sum fwd+bwd": lambda: layer(hidden).sum().backward(),
    }


def _median_us(fn: Callable[[], Any], calls: int) -> float:
    """Median wall microseconds of one call (after a warm-up)."""
    for _ in range(min(calls, 100)):
        fn()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per case")
    args = parser.parse_args()
    disttorch.set_num_threads(1)
    torch = peer_torch()
    ours = _cases(disttorch)
    theirs = _cases(torch) if torch is not None else {}
    width = max(map(len, ours))
    print(describe(torch))
    print(f"{'case':{width}s} {'disttorch us':>13s} {'torch us':>10s} {'ratio':>7s}")
    for name, fn in ours.items():
        d_us = _median_us(fn, args.calls)
        if name not in theirs:
            print(f"{name:{width}s} {d_us:13.1f}")
            continue
        t_us = _median_us(theirs[name], args.calls)
        print(f"{name:{width}s} {d_us:13.1f} {t_us:10.1f} {d_us / t_us:7.2f}")


if __name__ == "__main__":
    main()
