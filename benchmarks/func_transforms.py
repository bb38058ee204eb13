"""Function transforms and the linear-algebra long tail: disttorch beside PyTorch.

    python benchmarks/func_transforms.py

For each case, the best of ``--repeat`` timings of one call in disttorch and in PyTorch (CPU,
float64, same inputs) and their ratio (>1: disttorch slower). Jacobians take one backward
pass per output (``jacrev``) or input (``jacfwd``) element here where PyTorch vectorises the
passes with ``vmap``, so the ratio grows with the Jacobian's size.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import disttorch as dt


def best_of(fn, repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def cases(lib, n: int) -> dict:
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.normal(size=n))
    w = lib.tensor(rng.normal(size=(n, n)) / n**0.5)
    img = lib.tensor(rng.normal(size=(1, 3, 8, 8)))
    k = lib.tensor(rng.normal(size=(4, 3, 3, 3)))
    q, _ = np.linalg.qr(rng.normal(size=(200, 200)))
    spd = lib.tensor((q * np.linspace(1, 100, 200)) @ q.T)
    low = lib.tensor(rng.normal(size=(500, 10)) @ rng.normal(size=(10, 300)))
    F = lib.nn.functional

    def mlp(v):
        return (w @ (w @ v).tanh()).sin()

    def conv(a):
        return F.conv2d(a, k, padding=1).relu().sum((2, 3))

    return {
        f"jacrev MLP ({n} -> {n})": lambda: lib.func.jacrev(mlp)(x),
        f"jacfwd MLP ({n} -> {n})": lambda: lib.func.jacfwd(mlp)(x),
        f"hessian of sum(MLP) ({n})": lambda: lib.func.hessian(lambda v: mlp(v).sum())(x),
        f"jvp MLP ({n})": lambda: lib.func.jvp(mlp, (x,), (x,)),
        "jvp conv2d (1x3x8x8)": lambda: lib.func.jvp(conv, (img,), (img,)),
        f"autograd.functional.hvp ({n})": lambda: lib.autograd.functional.hvp(lambda v: mlp(v).sum(), x, x),
        "lobpcg k=3 (200x200)": lambda: lib.lobpcg(
            spd, k=3, X=lib.tensor(np.ones((200, 3)) + np.eye(200, 3))
        ),
        "svd_lowrank q=10 (500x300)": lambda: lib.svd_lowrank(low, q=10),
        "geqrf + ormqr (500x300)": lambda: lib.ormqr(*lib.geqrf(low), low[:, :5]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=32, help="width of the MLP cases")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    try:  # one BLAS thread on both sides (PyTorch below), as the machine may be shared
        import threadpoolctl

        threadpoolctl.threadpool_limits(1)
    except ImportError:
        pass
    ours = cases(dt, args.size)
    try:
        import torch

        torch.set_num_threads(1)
        theirs = cases(torch, args.size)
    except ImportError:
        theirs = {}
    print(f"{'case':34s} {'disttorch':>11s} {'torch':>11s} {'ratio':>7s}")
    for name, fn in ours.items():
        a = best_of(fn, args.repeat)
        b = best_of(theirs[name], args.repeat) if name in theirs else float("nan")
        print(f"{name:34s} {a * 1e3:9.2f}ms {b * 1e3:9.2f}ms {a / b:7.1f}")


if __name__ == "__main__":
    main()
