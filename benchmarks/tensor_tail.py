"""Time of the tensor long tail beside PyTorch (CPU, one thread) in the same run: Sobol
draws (plain and scrambled, including the engine's construction), scatter_reduce and
index_reduce forward+backward, torch.gradient.

    python benchmarks/tensor_tail.py            # median of --repeat runs per case
    python benchmarks/tensor_tail.py --repeat 5

Prints one row per case: disttorch ms, torch ms and the ratio (disttorch / torch; <1 is
faster). Without PyTorch only the disttorch column is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from machine import peer_torch, prepare_blas, print_ratios  # noqa: E402

prepare_blas()  # one thread, OpenBLAS's own kernels: before NumPy and PyTorch load

import numpy as np  # noqa: E402

R = np.random.default_rng(0)
X = R.normal(size=(2000, 256))
SRC = R.normal(size=(20000, 256))
IDX = R.integers(0, 2000, (20000, 256))
ROWS = R.integers(0, 2000, 20000)


def _sobol(lib, dim, n, scramble):
    return lib.quasirandom.SobolEngine(dim, scramble=scramble, seed=0 if scramble else None).draw(n)


def _scatter(lib, reduce):
    x = lib.tensor(X, requires_grad=True)
    s = lib.tensor(SRC, requires_grad=True)
    out = x.scatter_reduce(0, lib.tensor(IDX), s, reduce)
    out.sum().backward()
    return out


def _index(lib, reduce):
    x = lib.tensor(X, requires_grad=True)
    s = lib.tensor(SRC, requires_grad=True)
    out = x.index_reduce(0, lib.tensor(ROWS), s, reduce)
    out.sum().backward()
    return out


def _gradient(lib):
    x = lib.tensor(X, requires_grad=True)
    coords = (lib.tensor(np.cumsum(R.random(2000) + 0.1)), lib.tensor(np.arange(256) * 0.5))
    gs = lib.gradient(x, spacing=coords, edge_order=2)
    (gs[0].sum() + gs[1].sum()).backward()
    return gs


CASES = {
    "Sobol 16 dims, 2**16 points": lambda lib: _sobol(lib, 16, 2**16, False),
    "Sobol 1000 dims scrambled, 4096 points": lambda lib: _sobol(lib, 1000, 4096, True),
    "scatter_reduce sum 20000x256 -> 2000": lambda lib: _scatter(lib, "sum"),
    "scatter_reduce amax 20000x256 -> 2000": lambda lib: _scatter(lib, "amax"),
    "scatter_reduce mean 20000x256 -> 2000": lambda lib: _scatter(lib, "mean"),
    "index_reduce prod 20000 rows -> 2000": lambda lib: _index(lib, "prod"),
    "gradient 2000x256 coords, edge 2": _gradient,
}


def _time(lib, fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(lib)
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print_ratios(list(CASES), lambda lib, name: _time(lib, CASES[name], args.repeat), peer_torch())


if __name__ == "__main__":
    main()
