"""Mixed-precision benchmark: one training step of an MLP in float32, in bfloat16/float16
parameters, and under autocast (bfloat16, float16), disttorch beside PyTorch (CPU), plus the
cost of activation checkpointing and of a running profiler.

    python benchmarks/mixed_precision.py                 # batch 256, width 1024
    python benchmarks/mixed_precision.py --batch 64 --width 512 --repeats 10

Each row is the best of ``--repeats`` timed steps (forward, backward, SGD step) after a
warm-up; "vs torch" is disttorch's time over PyTorch's (>1: disttorch slower).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _model(lib, width: int, dtype=None):
    lib.manual_seed(0)
    m = lib.nn.Sequential(
        lib.nn.Linear(width, width),
        lib.nn.GELU(),
        lib.nn.Linear(width, width),
        lib.nn.GELU(),
        lib.nn.Linear(width, 10),
    )
    return m.to(dtype) if dtype is not None else m


def _time_step(lib, mode: str, batch: int, width: int, repeats: int) -> float:
    low = {"bf16 params": lib.bfloat16, "fp16 params": lib.float16}.get(mode)
    model = _model(lib, width, low)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    x = lib.randn(batch, width).to(low or lib.float32)
    y = lib.randint(0, 10, (batch,))
    ac = {"autocast bf16": lib.bfloat16, "autocast fp16": lib.float16}.get(mode)

    def step() -> None:
        ctx = lib.autocast("cpu", dtype=ac) if ac is not None else contextlib.nullcontext()
        with ctx:
            if mode == "checkpoint":
                h = lib.utils.checkpoint.checkpoint(model[:4], x, use_reentrant=False)
                out = model[4](h)
            else:
                out = model(x)
            loss = lib.nn.functional.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    prof = lib.profiler.profile() if mode == "profiler on" else contextlib.nullcontext()
    with prof:
        step()
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            step()
            best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    import disttorch
    import disttorch.profiler
    import disttorch.utils.checkpoint

    try:
        import torch
        import torch.profiler
        import torch.utils.checkpoint
    except ImportError:
        torch = None
    modes = [
        "float32",
        "bf16 params",
        "fp16 params",
        "autocast bf16",
        "autocast fp16",
        "checkpoint",
        "profiler on",
    ]
    print(f"one training step, MLP {args.width}x3, batch {args.batch} (best of {args.repeats})")
    print(f"{'mode':<16}{'disttorch ms':>14}{'torch ms':>12}{'vs torch':>10}")
    for mode in modes:
        ours = _time_step(disttorch, mode, args.batch, args.width, args.repeats) * 1e3
        theirs = _time_step(torch, mode, args.batch, args.width, args.repeats) * 1e3 if torch else None
        ratio = f"{ours / theirs:>10.2f}" if theirs else f"{'-':>10}"
        print(f"{mode:<16}{ours:>14.2f}{(f'{theirs:.2f}' if theirs else '-'):>12}{ratio}")


if __name__ == "__main__":
    main()
