"""Cost of CURVE encryption between two hosts: two ranks in two network namespaces joined by
a veth pair (needs root and ``ip netns``), all-reduce latency and bus bandwidth with CURVE
(the default off loopback) and with PLAIN forced (``DISTTORCH_ENCRYPT=0``).

    sudo python benchmarks/curve_netns.py [--sizes 4K,64K,4M,32M] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "distributed"))
import netns_helpers

WORKER = """
import json, sys, time
import numpy as np
import disttorch.distributed as dist
dist.init_process_group("gloo")
out = {}
for size in map(int, sys.argv[1].split(",")):
    x = np.ones(size // 4, np.float32)
    for _ in range(3):
        dist.all_reduce(x)
    best, n = float("inf"), max(10, min(1000, (128 << 20) // size))  # the same count on both ranks
    for _ in range(int(sys.argv[2])):
        dist.barrier()
        start = time.perf_counter()
        for _ in range(n):
            dist.all_reduce(x)
        best = min(best, (time.perf_counter() - start) / n)
    out[size] = best
if dist.get_rank() == 0:
    print("RESULT " + json.dumps(out), flush=True)
dist.destroy_process_group()
"""


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def run(ns: netns_helpers.Namespaces, sizes: list[int], rounds: int, encrypt: str) -> dict:
    secret, port = os.urandom(32).hex(), 29000 + os.getpid() % 1000
    procs = []
    for rank, (name, addr) in enumerate(((ns.a, ns.addr_a), (ns.b, ns.addr_b))):
        env = dict(
            os.environ,
            PYTHONPATH=ROOT,
            RANK=str(rank),
            WORLD_SIZE="2",
            MASTER_ADDR=ns.addr_a,
            MASTER_PORT=str(port),
            DISTTORCH_JOB_SECRET=secret,
            DISTTORCH_HOST_ADDR=addr,
            DISTTORCH_SAME_HOST_TRANSPORT="tcp",
            DISTTORCH_ENCRYPT=encrypt,
        )
        procs.append(
            subprocess.Popen(
                ns.run_in(name, [sys.executable, "-c", WORKER, ",".join(map(str, sizes)), str(rounds)]),
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    out = procs[0].communicate(timeout=600)[0]
    procs[1].wait(timeout=60)
    line = next(line for line in out.splitlines() if line.startswith("RESULT "))
    return {int(k): v for k, v in json.loads(line[7:]).items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="4K,64K,4M,32M")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not netns_helpers.available():
        sys.exit("needs root and `ip netns`")
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    with netns_helpers.two_namespaces() as ns:
        plain = run(ns, sizes, args.rounds, "0")
        curve = run(ns, sizes, args.rounds, "1")
    print(
        f"all_reduce float32, 2 ranks in two network namespaces (veth), {socket.gethostname()}, "
        f"{time.strftime('%Y-%m-%d')}"
    )
    print(
        f"{'size':>8} {'PLAIN us':>10} {'CURVE us':>10} {'PLAIN GB/s':>11} {'CURVE GB/s':>11} {'CURVE/PLAIN':>12}"
    )
    for size in sizes:
        p, c = plain[size], curve[size]
        label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
        print(
            f"{label:>8} {p * 1e6:>10.1f} {c * 1e6:>10.1f} {size / p / 1e9:>11.3f} {size / c / 1e9:>11.3f} "
            f"{p / c:>12.2f}"
        )


if __name__ == "__main__":
    main()
