"""Forward+backward time of the resampling, bag, sequence-loss and padding layers added
for the rest of ``torch.nn``, beside PyTorch (CPU, one thread) in the same run.

    python benchmarks/nn_rest.py            # median of --repeat runs per case
    python benchmarks/nn_rest.py --repeat 5

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
CASES = {
    "interpolate bilinear 32x64x64 x2": (
        lambda F, x: F.interpolate(x, scale_factor=2, mode="bilinear"),
        [R.normal(size=(8, 32, 64, 64))],
    ),
    "interpolate bicubic 16x32x32 x2": (
        lambda F, x: F.interpolate(x, scale_factor=2, mode="bicubic"),
        [R.normal(size=(8, 16, 32, 32))],
    ),
    "pixel_shuffle 64ch 32x32 r=2": (lambda F, x: F.pixel_shuffle(x, 2), [R.normal(size=(16, 64, 32, 32))]),
    "grid_sample bilinear 16x32x32": (
        lambda F, x, g: F.grid_sample(x, g, align_corners=False),
        [R.normal(size=(8, 16, 32, 32)), R.uniform(-1, 1, (8, 32, 32, 2))],
    ),
    "reflection pad 32x64x64 (2)": (
        lambda F, x: F.pad(x, (2, 2, 2, 2), mode="reflect"),
        [R.normal(size=(8, 32, 64, 64))],
    ),
    "embedding_bag mean 10k bags": (
        lambda F, i, w, o: F.embedding_bag(i, w, o),
        [R.integers(0, 5000, 40000), R.normal(size=(5000, 64)), np.arange(0, 40000, 4)],
    ),
    "ctc_loss T=100 N=16 C=30 S=20": (
        lambda F, lp, t: F.ctc_loss(lp.log_softmax(2), t, [100] * 16, [20] * 16),
        [R.normal(size=(100, 16, 30)), R.integers(1, 30, (16, 20))],
    ),
    "unfold 3x3 32x32x32": (lambda F, x: F.unfold(x, 3, padding=1), [R.normal(size=(8, 32, 32, 32))]),
}


def _time(lib, fn, arrays, repeat):
    times = []
    for _ in range(repeat):
        xs = [
            lib.tensor(a.astype(np.float32) if a.dtype.kind == "f" else a, requires_grad=a.dtype.kind == "f")
            for a in arrays
        ]
        start = time.perf_counter()
        out = fn(lib.nn.functional, *xs)
        out.sum().backward()
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print_ratios(list(CASES), lambda lib, name: _time(lib, *CASES[name], args.repeat), peer_torch())


if __name__ == "__main__":
    main()
