"""Cost of the payload checksum on unencrypted peer connections (``wire/frames.py``):
the checksum alone against ``zlib.crc32``, and a 2-rank all-reduce over tcp loopback with
PLAIN (``DISTTORCH_ENCRYPT=0``, the only case that computes it), with checksums on and off.

    python benchmarks/wire_checksum.py [--sizes 4K,64K,1M,4M] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time
import zlib

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from all_reduce_pair import label, parse_size, run_pair  # noqa: E402

from disttorch.distributed.wire import frames  # noqa: E402

WORKER = """
import sys
from all_reduce_pair import rank_main
from disttorch.distributed.wire import transport

if sys.argv[3] == "off":  # what the wire costs without the checksum (both ranks agree)
    init = transport.Transport.__init__
    def without_checksums(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self._checksums = False
    transport.Transport.__init__ = without_checksums
rank_main(64 << 20, "zeros")  # zeros: the sums stay finite
"""


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def all_reduce_times(sizes: list[int], rounds: int, checksums: str) -> dict:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = [",".join(map(str, sizes)), str(rounds), checksums]
    return run_pair(WORKER, args, master=("127.0.0.1", port), env={"DISTTORCH_ENCRYPT": "0"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="4K,64K,1M,4M")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    print(f"payload checksum, {socket.gethostname()}, {time.strftime('%Y-%m-%d')}")
    print(f"{'size':>8} {'checksum GB/s':>14} {'crc32 GB/s':>11}")
    for size in sizes:
        data = np.random.default_rng(0).integers(0, 256, size, dtype=np.uint8)
        n = max(10, (32 << 20) // size)
        ours = best_of(lambda: [frames.checksum([data]) for _ in range(n)], args.rounds) / n
        crc = best_of(lambda: [zlib.crc32(data) for _ in range(n)], args.rounds) / n
        print(f"{label(size):>8} {size / ours / 1e9:>14.2f} {size / crc / 1e9:>11.2f}")
    on = all_reduce_times(sizes, args.rounds, "on")
    off = all_reduce_times(sizes, args.rounds, "off")
    print("\nall_reduce float32, 2 ranks, PLAIN over tcp loopback")
    print(f"{'size':>8} {'no checksum us':>15} {'checksum us':>12} {'cost':>7}")
    for size in sizes:
        print(
            f"{label(size):>8} {off[size] * 1e6:>15.1f} {on[size] * 1e6:>12.1f} {on[size] / off[size] - 1:>7.1%}"
        )


if __name__ == "__main__":
    main()
