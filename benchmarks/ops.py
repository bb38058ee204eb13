"""Op benchmarks: per-op overhead and large-op throughput, side by side with PyTorch.

Run by hand: ``python benchmarks/ops.py [--repeat N]``. Prints three tables:

1. Per-op overhead: forward + backward of a tiny op (100 elements; 10x10 for matmul),
   ``op(a, b).sum().backward()``, in microseconds, for disttorch and PyTorch (when
   installed), and their ratio (target: disttorch within 2x of PyTorch); then the
   forward alone, where recording the graph node is the cost.
2. Large ops: forward of 1M-element add/mul/exp and a 512x512 matmul, in milliseconds,
   for raw NumPy, disttorch (with and without inputs that require grad) and PyTorch.
   Target: disttorch within 1.1x of raw NumPy.

Every figure is CPU time of this process (``time.process_time``), the minimum over
several rounds, so that other programs on a shared machine disturb it little; BLAS and
PyTorch run on one thread each so that CPU time and wall time agree.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import timeit
from typing import Any, Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from machine import KEEP_FLAG, describe, prepare_blas  # noqa: E402

prepare_blas()  # one thread, OpenBLAS's own kernels: before NumPy and PyTorch load

import numpy as np  # noqa: E402

import disttorch  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # PyTorch is an optional peer
    torch = None

FORWARD_OPS: dict[str, Callable[[Any, Any, Any], Callable[[], Any]]] = {
    "add": lambda L, a, b: lambda: a + b,
    "mul": lambda L, a, b: lambda: a * b,
    "matmul": lambda L, a, b: lambda: a @ b,
    "sum": lambda L, a, b: lambda: a.sum(),
}
OVERHEAD_OPS: dict[str, Callable[[Any, Any, Any], Callable[[], None]]] = {
    "add": lambda L, a, b: lambda: (a + b).sum().backward(),
    "mul": lambda L, a, b: lambda: (a * b).sum().backward(),
    "matmul": lambda L, a, b: lambda: (a @ b).sum().backward(),
    "sum": lambda L, a, b: lambda: a.sum().backward(),
    "exp": lambda L, a, b: lambda: L.exp(a).sum().backward(),
    "max(dim)": lambda L, a, b: lambda: a.max(dim=-1).values.sum().backward(),
}


def best_times(fns: list[Callable[[], Any] | None], number: int, repeat: int) -> list:
    """Minimum seconds per call of each function over ``repeat`` rounds of ``number`` calls.

    The functions take turns within each round (in rotating order), so that all of them
    see the same load on a shared machine; the minimum keeps the quietest round.
    """
    best = [float("inf")] * len(fns)
    for fn in fns:
        if fn is not None:
            fn()  # warm up
    for r in range(repeat):
        for k in range(len(fns)):
            i = (r + k) % len(fns)  # rotate who goes first: no order effects
            fn = fns[i]
            if fn is not None:
                timer = timeit.Timer(fn, timer=time.process_time)
                best[i] = min(best[i], timer.timeit(number=number) / number)
    return [b if b != float("inf") else None for b in best]


def _inputs(lib: Any, name: str) -> tuple:
    shape = (10, 10) if name in ("matmul", "max(dim)") else (100,)
    rng = np.random.default_rng(0)
    return tuple(lib.tensor(rng.normal(size=shape).astype(np.float32), requires_grad=True) for _ in range(2))


def overhead_table(repeat: int, ops: dict = OVERHEAD_OPS) -> list[tuple]:
    rows = []
    for name, make in ops.items():
        fns = [
            make(disttorch, *_inputs(disttorch, name)),
            make(torch, *_inputs(torch, name)) if torch else None,
        ]
        ours, theirs = best_times(fns, 200, repeat)
        rows.append((name, ours * 1e6, theirs * 1e6 if theirs else None))
    return rows


def large_table(repeat: int) -> list[tuple]:
    rng = np.random.default_rng(0)
    big = [rng.normal(size=1_000_000).astype(np.float32) for _ in range(2)]
    mat = [rng.normal(size=(512, 512)).astype(np.float32) for _ in range(2)]
    cases = {
        "add 1M": (np.add, lambda L, a, b: a + b, big),
        "mul 1M": (np.multiply, lambda L, a, b: a * b, big),
        "exp 1M": (lambda a, b: np.exp(a), lambda L, a, b: L.exp(a), big),
        "matmul 512": (np.matmul, lambda L, a, b: a @ b, mat),
    }
    rows = []
    for name, (np_fn, fn, (x, y)) in cases.items():
        a, b = disttorch.from_numpy(x), disttorch.from_numpy(y)
        ag, bg = (disttorch.from_numpy(v).requires_grad_() for v in (x, y))
        fns = [
            lambda: np_fn(x, y),
            lambda: fn(disttorch, a, b),
            lambda: fn(disttorch, ag, bg),
            (lambda: fn(torch, torch.from_numpy(x), torch.from_numpy(y))) if torch else None,
        ]
        times = best_times(fns, 5, repeat)
        rows.append((name,) + tuple(t * 1e3 if t is not None else None for t in times))
    return rows


def _fmt(v: float | None, spec: str = "9.1f") -> str:
    return format(v, spec) if v is not None else format("-", ">9")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=25, help="rounds per figure (min is kept)")
    parser.add_argument(
        KEEP_FLAG, action="store_true", help="keep the environment's OPENBLAS_CORETYPE (see machine.py)"
    )
    args = parser.parse_args()
    peer = f"PyTorch {torch.__version__} (1 thread)" if torch else "PyTorch not installed"
    print(f"disttorch {disttorch.__version__} vs {peer}; {describe()}\n")

    print("Per-op overhead: forward + backward, op(a, b).sum().backward(), microseconds")
    print(f"{'op':<10}{'disttorch':>10}{'torch':>10}{'ratio':>8}   (target ratio <= 2.0)")
    for name, ours, theirs in overhead_table(args.repeat):
        ratio = _fmt(ours / theirs if theirs else None, "8.2f")
        print(f"{name:<10}{ours:10.1f}{_fmt(theirs, '10.1f')}{ratio}")

    print("\nOf which forward only (inputs require grad: the graph node is recorded), microseconds")
    print(f"{'op':<10}{'disttorch':>10}{'torch':>10}{'ratio':>8}")
    for name, ours, theirs in overhead_table(args.repeat, FORWARD_OPS):
        ratio = _fmt(ours / theirs if theirs else None, "8.2f")
        print(f"{name:<10}{ours:10.1f}{_fmt(theirs, '10.1f')}{ratio}")

    print("\nLarge ops: forward only, milliseconds")
    print(
        f"{'op':<11}{'numpy':>9}{'ours':>9}{'ours(rg)':>9}{'torch':>9}{'ours/np':>9}"
        f"{'rg/np':>8}   (target <= 1.10)"
    )
    for name, t_np, t_ours, t_rg, t_torch in large_table(args.repeat):
        print(
            f"{name:<11}{t_np:9.3f}{t_ours:9.3f}{t_rg:9.3f}{_fmt(t_torch, '9.3f')}"
            f"{t_ours / t_np:9.2f}{t_rg / t_np:8.2f}"
        )


if __name__ == "__main__":
    main()
