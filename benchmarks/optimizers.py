"""Time ``optimizer.step()`` of every optimiser (four parameters of ``--size`` float32
entries each, constant gradients) in disttorch and, when installed, in PyTorch, on one
thread, side by side in one run; print a table with the ratios.

    python benchmarks/optimizers.py [--size 1000000] [--steps 10] [--only Adam,SGD]

A ratio is disttorch's median step time over PyTorch's (lower is better); CPU time per step,
the two libraries taking turns step by step. SparseAdam gets a sparse COO gradient in PyTorch and
the same values dense in disttorch. LBFGS is timed with a closure of one
elementwise loss (both libraries evaluate it), Muon on 1000 x (size / 1000) matrices.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from machine import describe, prepare_blas

prepare_blas()

import disttorch

try:
    import torch
except ImportError:
    torch = None

CASES = {
    "SGD": {"lr": 0.1, "momentum": 0.9},
    "Adam": {},
    "AdamW": {},
    "Adamax": {},
    "NAdam": {},
    "RAdam": {},
    "Adagrad": {},
    "Adadelta": {},
    "Adafactor": {},
    "ASGD": {},
    "RMSprop": {"momentum": 0.9, "centered": True},
    "Rprop": {},
    "SparseAdam": {},
    "Muon": {},
    "LBFGS": {"max_iter": 4},
}


def _setup(lib, name: str, size: int):
    shape = (1000, size // 1000) if name == "Muon" else (size,)
    params = [lib.full(shape, 0.5, requires_grad=True) for _ in range(4)]
    for p in params:
        p.grad = lib.full(shape, 0.01)
        if name == "SparseAdam" and lib is torch:  # PyTorch's takes sparse gradients only; ours also dense
            p.grad = p.grad.to_sparse()
    opt = getattr(lib.optim, name)(params, **CASES[name])
    if name != "LBFGS":
        return lambda: opt.step()

    def closure():
        opt.zero_grad()
        loss = sum(((p - 1) ** 2).sum() for p in params)
        loss.backward()
        return loss

    return lambda: opt.step(closure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--only", default="", help="comma-separated optimiser names")
    args = parser.parse_args()
    names = [n for n in CASES if not args.only or n in args.only.split(",")]
    if torch is not None:
        torch.set_num_threads(1)
    print(describe())
    print(f"{'optimiser':12s} {'disttorch ms':>13s} {'torch ms':>10s} {'ratio':>7s}")
    for name in names:
        steps = {"disttorch": _setup(disttorch, name, args.size)}
        if torch is not None:
            steps["torch"] = _setup(torch, name, args.size)
        times: dict = {k: [] for k in steps}
        for step in steps.values():
            step()  # state initialisation is not timed
        for _ in range(args.steps):
            for k, step in steps.items():
                t = time.process_time()
                step()
                times[k].append(time.process_time() - t)
        ours = statistics.median(times["disttorch"]) * 1e3
        if torch is None:
            print(f"{name:12s} {ours:13.2f} {'-':>10s} {'-':>7s}")
        else:
            theirs = statistics.median(times["torch"]) * 1e3
            print(f"{name:12s} {ours:13.2f} {theirs:10.2f} {ours / theirs:7.2f}")


if __name__ == "__main__":
    main()
