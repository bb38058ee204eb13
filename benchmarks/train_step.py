"""Time one training step (forward, cross-entropy, backward, SGD-momentum step) on one
thread for three models (MLP, small CNN, small GPT; see ``models.py``), in disttorch and,
when installed, in PyTorch, side by side in one run; print a table with the ratios.

    python benchmarks/train_step.py [--steps 20] [--models mlp,cnn,gpt] [--profile cnn]
                                    [--threads N]

``--threads N`` runs both libraries with ``set_num_threads(N)`` (wall time: CPU time adds
up the threads) and adds each library's speed-up over one thread, measured in the same run.

A ratio is disttorch's median step time over PyTorch's (lower is better); the two take
turns step by step and CPU time is measured unless ``--clock wall`` (see ``time_steps``).
NumPy's OpenBLAS chooses its kernels for this CPU, as PyTorch does, unless
``--keep-openblas-coretype`` keeps a pin from the environment (see ``machine.py``). Targets:
MLP <= 0.8, GPT <= 1.0, CNN <= 1.5. ``--profile NAME`` prints a cProfile summary of
disttorch's steps for that model instead of the table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from machine import KEEP_FLAG, describe, prepare_blas  # noqa: E402

prepare_blas()  # one thread, OpenBLAS's own kernels: before NumPy and PyTorch load

import numpy as np  # noqa: E402
from models import build_cnn, build_gpt, build_mlp  # noqa: E402

import disttorch  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # PyTorch is optional: the table then has disttorch's column only
    torch = None

TARGETS = {"mlp": 0.8, "cnn": 1.5, "gpt": 1.0}


def _data(name: str, seed: int = 0) -> tuple:
    """Inputs and integer targets for a model, as NumPy arrays (shared by both libraries)."""
    rng = np.random.default_rng(seed)
    if name == "mlp":
        return rng.standard_normal((128, 784)).astype(np.float32), rng.integers(0, 10, 128)
    if name == "cnn":
        return rng.standard_normal((128, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, 128)
    tokens = rng.integers(0, 65, (32, 65))
    return tokens[:, :-1], tokens[:, 1:]


BUILDERS: dict[str, Callable[[Any], Any]] = {"mlp": build_mlp, "cnn": build_cnn, "gpt": build_gpt}


def make_step(lib: Any, name: str) -> Callable[[], float]:
    """A closure running one training step of model ``name`` in library ``lib``."""
    lib.manual_seed(0)
    model = BUILDERS[name](lib)
    x_np, y_np = _data(name)
    x = lib.tensor(x_np)
    y = lib.tensor(y_np.astype(np.int64))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    F = lib.nn.functional

    def step() -> float:
        out = model(x)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    return step


def time_steps(
    steps_by_lib: list, n: int, warmup: int = 3, clock: Callable[[], float] = time.process_time
) -> list:
    """Median time (ms) of one step for each closure in ``steps_by_lib``.

    The closures take turns step by step, so a change in machine load affects both sides
    alike. The default clock is the CPU time of the process: both libraries run on one
    thread, so on an idle machine it equals wall time, and on a busy one it is not
    inflated by time spent waiting for a core (``--clock wall`` measures wall time)."""
    for step in steps_by_lib:
        for _ in range(warmup):
            step()
    times: list = [[] for _ in steps_by_lib]
    for _ in range(n):
        for step, record in zip(steps_by_lib, times):
            t0 = clock()
            step()
            record.append(clock() - t0)
    return [statistics.median(t) * 1e3 for t in times]


def profile(name: str, steps: int) -> None:
    """cProfile (CPU time) of disttorch's steps for one model, sorted by own time."""
    import cProfile
    import pstats

    step = make_step(disttorch, name)
    for _ in range(3):
        step()
    prof = cProfile.Profile(time.process_time)
    prof.enable()
    for _ in range(steps):
        step()
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="timed steps per model")
    parser.add_argument("--models", default="mlp,cnn,gpt", help="comma-separated subset")
    parser.add_argument("--profile", default=None, help="profile disttorch on this model")
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads of both libraries")
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="CPU time of the process (default) or wall time",
    )
    parser.add_argument(
        KEEP_FLAG, action="store_true", help="keep the environment's OPENBLAS_CORETYPE (see machine.py)"
    )
    args = parser.parse_args()
    if args.profile:
        profile(args.profile, args.steps)
        return
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    if args.threads > 1:
        threaded(names, args.threads, args.steps)
        return
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    print(f"one training step, 1 thread, {args.clock} time, median of {args.steps}; {describe(torch)}")
    print(f"{'model':<6}{'disttorch ms':>14}{'torch ms':>11}{'ratio':>8}{'target':>8}  ")
    for name in names:
        if torch is None:
            (ours,) = time_steps([make_step(disttorch, name)], args.steps, clock=clock)
            print(f"{name:<6}{ours:>14.2f}{'-':>11}{'-':>8}{TARGETS[name]:>8.1f}")
            continue
        ours, theirs = time_steps(
            [make_step(disttorch, name), make_step(torch, name)], args.steps, clock=clock
        )
        ratio = ours / theirs
        verdict = "ok" if ratio <= TARGETS[name] else "over"
        print(f"{name:<6}{ours:>14.2f}{theirs:>11.2f}{ratio:>8.2f}{TARGETS[name]:>8.1f}  {verdict}")


def threaded(names: list, threads: int, steps: int, rounds: int = 10) -> None:
    """Wall time of a step on 1 and on ``threads`` threads, per library, and the speed-ups;
    target: disttorch's speed-up >= 0.9x PyTorch's.

    The run is ``rounds`` rounds; in each, disttorch and then PyTorch take a block of steps
    on one thread and a block on ``threads`` (two warm-up steps after each switch, and a pause
    after PyTorch's blocks, in which its idle OpenMP threads stop spinning on the cores).
    Each round gives both speed-ups, measured within a second or so of each other, and
    their ratio; the table shows the medians over the rounds and the spread of the ratio
    (the middle half of the rounds), so a drift in the machine's speed touches both
    libraries alike and shows up as spread instead of as a biased ratio."""
    libs = [disttorch] + ([torch] if torch is not None else [])
    per_block = max(1, -(-steps // rounds))
    print(
        f"one training step, 1 vs {threads} threads, wall time, {rounds} rounds of {per_block} steps per "
        f"library and thread count; {describe(torch)}"
    )
    print(f"{'model':<6}{'library':>10}{'1 thread ms':>13}{f'{threads} threads ms':>14}{'speed-up':>10}")
    for name in names:
        step_of = {lib: make_step(lib, name) for lib in libs}
        times: dict = {(lib, n): [] for lib in libs for n in (1, threads)}
        for _ in range(rounds):
            for lib in libs:
                for n in (1, threads):
                    lib.set_num_threads(n)
                    median = time_steps([step_of[lib]], per_block, warmup=2, clock=time.perf_counter)[0]
                    times[lib, n].append(median)
                lib.set_num_threads(1)
                if lib is torch:
                    time.sleep(0.3)
        speedups = {lib: [a / b for a, b in zip(times[lib, 1], times[lib, threads])] for lib in libs}
        for lib in libs:
            one, many = (statistics.median(times[lib, n]) for n in (1, threads))
            print(
                f"{name:<6}{lib.__name__:>10}{one:>13.2f}{many:>14.2f}{statistics.median(speedups[lib]):>10.2f}"
            )
        if torch is not None:
            ratios = sorted(a / b for a, b in zip(speedups[disttorch], speedups[torch]))
            low, high = ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]
            print(
                f"{name:<6}{'ratio':>10}{'':>27}{statistics.median(ratios):>10.2f}"
                f"  (middle half of the rounds {low:.2f}-{high:.2f}; target >= 0.9)"
            )


if __name__ == "__main__":
    main()
