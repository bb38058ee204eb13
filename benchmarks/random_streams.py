"""Random-stream benchmarks: disttorch's samplers, which reproduce PyTorch's CPU streams,
against the NumPy PCG64 spelling they replaced and PyTorch's own samplers.

Run by hand: ``python benchmarks/random_streams.py [--repeat N] [--size N]``. Prints one
table, milliseconds per call (CPU time of this process, the minimum over rounds in which
the contenders take turns; one PyTorch thread), and the ratios disttorch / NumPy and
disttorch / PyTorch.

- rand / randn: ``size`` float32 and float64 samples (NumPy: ``Generator.random`` and
  ``standard_normal`` in float64, cast, as disttorch did before).
- randint: ``size`` int64 in ``[0, 100)``.
- randperm: a permutation of 60000 (an MNIST epoch's shuffle; PyTorch's Fisher-Yates is
  sequential, one Python step per swap here).
- dropout mask: ``bernoulli_(0.5)`` of ``size`` float32 (NumPy: ``random() < p``).
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from machine import KEEP_FLAG, describe, prepare_blas

prepare_blas()  # one thread: before NumPy and PyTorch load

import numpy as np
from ops import best_times

import disttorch as dt

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # PyTorch is an optional peer
    torch = None


def cases(n: int) -> dict:
    """name -> (disttorch, NumPy PCG64 spelling, PyTorch spelling or None)."""
    rng = np.random.Generator(np.random.PCG64(0))
    t = torch
    ones = dt.ones(n)
    return {
        "rand f32": (
            lambda: dt.rand(n),
            lambda: rng.random(n).astype(np.float32),
            t and (lambda: t.rand(n)),
        ),
        "randn f32": (
            lambda: dt.randn(n),
            lambda: rng.standard_normal(n).astype(np.float32),
            t and (lambda: t.randn(n)),
        ),
        "rand f64": (
            lambda: dt.rand(n, dtype=dt.float64),
            lambda: rng.random(n),
            t and (lambda: t.rand(n, dtype=t.float64)),
        ),
        "randn f64": (
            lambda: dt.randn(n, dtype=dt.float64),
            lambda: rng.standard_normal(n),
            t and (lambda: t.randn(n, dtype=t.float64)),
        ),
        "randint [0,100)": (
            lambda: dt.randint(0, 100, (n,)),
            lambda: rng.integers(0, 100, n),
            t and (lambda: t.randint(0, 100, (n,))),
        ),
        "randperm 60000": (
            lambda: dt.randperm(60000),
            lambda: rng.permutation(60000),
            t and (lambda: t.randperm(60000)),
        ),
        "dropout mask": (
            lambda: ones.bernoulli_(0.5),
            lambda: (rng.random(n) < 0.5).astype(np.float32),
            t and (lambda: t.ones(n).bernoulli_(0.5)),
        ),
    }


def _fmt(v: float | None, spec: str) -> str:
    return format(v, spec) if v is not None else format("-", ">9")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds per figure (min is kept)")
    parser.add_argument("--size", type=int, default=10_000_000, help="samples per call")
    parser.add_argument(KEEP_FLAG, action="store_true", help="keep the environment's OPENBLAS_CORETYPE")
    args = parser.parse_args()
    peer = f"PyTorch {torch.__version__} (1 thread)" if torch else "PyTorch not installed"
    print(f"disttorch random streams vs NumPy PCG64 and {peer}; {args.size} samples; {describe()}\n")
    print(f"{'sampler':<18}{'ours ms':>10}{'numpy ms':>10}{'torch ms':>10}{'/numpy':>8}{'/torch':>8}")
    for name, (ours, plain, theirs) in cases(args.size).items():
        k, n, p = best_times([ours, plain, theirs], 1, args.repeat)
        k, n = k * 1e3, n * 1e3
        p = p * 1e3 if p is not None else None
        print(
            f"{name:<18}{k:10.1f}{n:10.1f}{_fmt(p, '10.1f')}{k / n:8.2f}{_fmt(k / p if p else None, '8.2f')}"
        )


if __name__ == "__main__":
    main()
