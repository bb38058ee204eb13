"""Cost of CURVE encryption between two hosts: two ranks in two network namespaces joined by
a veth pair (needs root and ``ip netns``), all-reduce latency and bus bandwidth with CURVE
(the default off loopback) and with PLAIN forced (``DISTTORCH_ENCRYPT=0``).

    sudo python benchmarks/curve_netns.py [--sizes 4K,64K,4M,32M] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "distributed"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import netns_helpers
from all_reduce_pair import label, parse_size, run_pair  # noqa: E402

WORKER = "from all_reduce_pair import rank_main; rank_main(128 << 20)"


def run(ns: netns_helpers.Namespaces, sizes: list[int], rounds: int, encrypt: str) -> dict:
    hosts = ((ns.a, ns.addr_a), (ns.b, ns.addr_b))
    return run_pair(
        WORKER,
        [",".join(map(str, sizes)), str(rounds)],
        master=(ns.addr_a, 29000 + os.getpid() % 1000),
        env={"DISTTORCH_ENCRYPT": encrypt},
        rank_env=lambda rank: {"DISTTORCH_HOST_ADDR": hosts[rank][1]},
        wrap=lambda rank, argv: ns.run_in(hosts[rank][0], argv),
    )


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
        print(
            f"{label(size):>8} {p * 1e6:>10.1f} {c * 1e6:>10.1f} {size / p / 1e9:>11.3f} {size / c / 1e9:>11.3f} "
            f"{p / c:>12.2f}"
        )


if __name__ == "__main__":
    main()
