"""A float32 linear layer's forward (``x @ W.T + b``) on 1 and N threads: the layers of
``train_step.py``'s GPT (2048 tokens) and MLP (batch 128).

    python benchmarks/linear_forward.py [--threads 2] [--repeat 200]

Median wall time of ``--repeat`` calls per shape and thread count, in microseconds, and the
speed-up. To compare two versions, run this file alternately with each on ``PYTHONPATH``
(``chrt -f 10`` steadies the figures on a loaded machine).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from machine import KEEP_FLAG, describe, prepare_blas  # noqa: E402

prepare_blas()  # one BLAS thread: the op threads share the products

import numpy as np  # noqa: E402

import disttorch  # noqa: E402
import disttorch.nn.functional as F  # noqa: E402

SHAPES = [(2048, 128, 384), (2048, 128, 512), (2048, 512, 128), (128, 784, 512)]  # rows, in, out


def median_us(args: tuple, repeat: int) -> float:
    for _ in range(max(1, repeat // 10)):  # warm-up: the pool's threads, the products' plans
        F.linear(*args)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        F.linear(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2, help="the second thread count")
    parser.add_argument("--repeat", type=int, default=200, help="timed calls per shape and thread count")
    parser.add_argument(KEEP_FLAG, action="store_true", help="keep OPENBLAS_CORETYPE from the environment")
    options = parser.parse_args()
    print(f"linear forward, float32, median of {options.repeat} calls, us; {describe()}")
    print(f"{'shape':>18} {'1 thread':>9} {f'{options.threads} threads':>10} {'speed-up':>9}")
    rng = np.random.default_rng(0)
    for rows, inputs, outputs in SHAPES:
        args = tuple(
            disttorch.tensor(rng.standard_normal(shape).astype(np.float32))
            for shape in ((rows, inputs), (outputs, inputs), (outputs,))
        )
        times = []
        for n in (1, options.threads):
            disttorch.set_num_threads(n)
            times.append(median_us(args, options.repeat))
        shape = f"{rows}x{inputs}->{outputs}"
        print(f"{shape:>18} {times[0]:9.0f} {times[1]:10.0f} {times[0] / times[1]:9.2f}")


if __name__ == "__main__":
    main()
