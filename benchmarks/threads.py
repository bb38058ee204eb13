"""Where splitting an op over threads starts to pay: the cut-over behind
``disttorch.kernels.threads.MIN_PART_ELEMENTS``.

    python benchmarks/threads.py [--threads N] [--repeat 30]

For float32 inputs of 2^12 ... 2^22 elements, times a multiply, an ``exp``, a row
softmax, a cast to bfloat16, a whole-array max, a copy of a transposed view (``contiguous``)
and a concatenation along dim 1 (``cat``) on one thread and split over ``N`` threads
(default: the usable cores), with the
cut-over disabled so that every size splits, and prints the speed-up. The smallest size
whose speed-up is clearly above 1, divided by ``N``, is the work one part needs. Best of
``--repeat`` wall times (the machine's other load inflates the median, not the best).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import disttorch  # noqa: E402
from disttorch.kernels import reductions, softmax, threads  # noqa: E402

OPS = {
    "mul": lambda a, b: threads.elementwise(np.multiply, a, b),
    "exp": lambda a, b: threads.elementwise(np.exp, a),
    "softmax": lambda a, b: softmax.softmax(a.reshape(-1, 256), 1),
    "to bf16": lambda a, b: threads.astype(a, disttorch.bfloat16.numpy),
    "max": lambda a, b: reductions.ufunc_reduce(np.maximum, a, None),
    "transpose": lambda a, b: threads.copy(a.reshape(-1, 64).T),
    "cat": lambda a, b: threads.concatenate([a.reshape(-1, 64), b.reshape(-1, 64)], 1, a.dtype),
}


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args()
    threads.MIN_PART_ELEMENTS = 1
    rng = np.random.default_rng(0)
    print(f"speed-up of {args.threads} threads over 1 (best of {args.repeat}), float32")
    print(f"{'elements':>10} " + " ".join(f"{name:>9}" for name in OPS))
    for power in range(12, 23, 2):
        a = rng.standard_normal(1 << power).astype(np.float32)
        b = rng.standard_normal(1 << power).astype(np.float32)
        row = []
        for op in OPS.values():
            threads.set_num_threads(1)
            one = best(lambda: op(a, b), args.repeat)
            threads.set_num_threads(args.threads)
            many = best(lambda: op(a, b), args.repeat)
            row.append(one / many)
        print(f"{1 << power:>10} " + " ".join(f"{s:>9.2f}" for s in row))


if __name__ == "__main__":
    main()
