"""All-reduce benchmark: disttorch's algorithms (and its automatic choice) beside PyTorch's gloo.

    python benchmarks/collectives.py                      # world sizes 2 and 4, 4 KiB .. 64 MiB
    python benchmarks/collectives.py --world 2 --max-size 4M --algorithms auto,ring

``auto`` is the automatic choice: on one host, the shared-memory algorithms
(``algorithms/shm.py``); ``ring`` and ``tree`` go over the sockets.

For every world size the ranks are started as separate processes on this machine. Each
rank measures, for each buffer size, the time of one float32 all-reduce (mean over as many
iterations as fit in ``--budget`` seconds, after a warm-up), for each disttorch algorithm
and then for ``torch.distributed`` with the gloo backend (when torch is importable), in the
same processes, one after the other. Reported (nccl-tests' definitions):

- latency: time of one all-reduce,
- algbw = size / latency,
- busbw = algbw * 2 (n - 1) / n: the bandwidth each link needs, comparable across world sizes,
- memcpy: bandwidth of one ``np.copyto`` of the same size on one core, an upper bound on
  what moving bytes through memory can do here,
- vs gloo: busbw ratio (>1: disttorch faster) and latency ratio (<1: disttorch faster).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("IB")
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def sizes_between(low: int, high: int) -> list[int]:
    out, s = [], low
    while s <= high:
        out.append(s)
        s *= 4
    return out


def measure(all_reduce, barrier, broadcast_count, nbytes: int, budget: float) -> float:
    buf = np.zeros(nbytes // 4, np.float32)
    for _ in range(2):
        all_reduce(buf)
    barrier()
    start = time.perf_counter()
    all_reduce(buf)
    once = time.perf_counter() - start
    count = broadcast_count(max(3, min(2000, int(budget / max(once, 1e-6)))))
    barrier()
    start = time.perf_counter()
    for _ in range(count):
        all_reduce(buf)
    barrier()
    return (time.perf_counter() - start) / count


def worker(args) -> None:
    """One rank: both libraries initialized side by side; for each size, every implementation
    is measured ``--rounds`` times, interleaved, and the best time kept (the machine may be
    shared, so interleaving keeps the comparison fair and the minimum filters out noise)."""
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    import disttorch.distributed as dist

    dist.init_process_group()

    def count_ours(n: int) -> int:
        a = np.array([n], np.int64)
        dist.broadcast(a, src=0)
        return int(a[0])

    implementations = {}
    for algorithm in args.algorithms.split(","):

        def ours(buf: np.ndarray, algorithm: str = algorithm) -> None:
            os.environ["DISTTORCH_ALGORITHM"] = algorithm
            dist.all_reduce(buf)

        implementations[algorithm] = (ours, dist.barrier, count_ours)
    try:
        import torch
        import torch.distributed as tdist
    except ImportError:
        torch = None
    if torch is not None and not args.no_gloo:
        torch.set_num_threads(1)
        tdist.init_process_group(
            "gloo",
            init_method=f"tcp://127.0.0.1:{int(os.environ['MASTER_PORT']) + 1}",
            rank=rank,
            world_size=world,
        )

        def count_gloo(n: int) -> int:
            t = torch.tensor([n])
            tdist.broadcast(t, src=0)
            return int(t.item())

        implementations["gloo"] = (
            lambda buf: tdist.all_reduce(torch.from_numpy(buf)),
            tdist.barrier,
            count_gloo,
        )
    results: dict = {}
    for nbytes in args.sizes:
        for _ in range(args.rounds):
            for name, (all_reduce, barrier, count) in implementations.items():
                if name == "star" and nbytes > (16 << 20):
                    continue
                t = measure(all_reduce, barrier, count, nbytes, args.budget)
                key = f"{name}/{nbytes}"
                results[key] = min(t, results.get(key, t))
    os.environ["DISTTORCH_ALGORITHM"] = "auto"
    dist.destroy_process_group()
    if "gloo" in implementations:
        tdist.destroy_process_group()
    if rank == 0:
        with open(args.out, "w") as f:
            json.dump(results, f)


def memcpy_bandwidth(nbytes: int) -> float:
    src, dst = np.ones(nbytes, np.uint8), np.empty(nbytes, np.uint8)
    np.copyto(dst, src)
    n = max(3, int(0.2 / max(nbytes / 5e9, 1e-7)))
    start = time.perf_counter()
    for _ in range(n):
        np.copyto(dst, src)
    return nbytes * n / (time.perf_counter() - start)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_world(world: int, args) -> dict:
    out = f"/tmp/disttorch-bench-{os.getpid()}-{world}.json"
    port = free_port()
    env = dict(
        os.environ,
        WORLD_SIZE=str(world),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p),
        DISTTORCH_JOB_SECRET=os.urandom(32).hex(),
        OMP_NUM_THREADS="1",
    )
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        "--out",
        out,
        "--sizes",
        ",".join(map(str, args.sizes)),
        "--algorithms",
        args.algorithms,
        "--budget",
        str(args.budget),
        "--rounds",
        str(args.rounds),
    ] + (["--no-gloo"] if args.no_gloo else [])
    procs = [subprocess.Popen(cmd, env=dict(env, RANK=str(r), LOCAL_RANK=str(r))) for r in range(world)]
    for p in procs:
        if p.wait() != 0:
            raise SystemExit(f"a rank of the world-{world} run failed (exit code {p.returncode})")
    with open(out) as f:
        results = json.load(f)
    os.remove(out)
    return results


def human(nbytes: int) -> str:
    return f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"


def report(world: int, results: dict, algorithms: list[str], sizes: list[int]) -> None:
    factor = 2 * (world - 1) / world
    print(f"\nall_reduce float32, world size {world} (busbw = algbw x {factor:.2f})")
    print(
        f"{'size':>8} {'algorithm':>9} {'latency us':>11} {'algbw GB/s':>10} {'busbw GB/s':>10} "
        f"{'memcpy GB/s':>11} {'busbw/gloo':>10} {'lat/gloo':>9}"
    )
    for nbytes in sizes:
        gloo = results.get(f"gloo/{nbytes}")
        bound = memcpy_bandwidth(nbytes) / 1e9
        for name in algorithms + (["gloo"] if gloo else []):
            t = results.get(f"{name}/{nbytes}")
            if t is None:
                continue
            algbw = nbytes / t / 1e9
            ratio = f"{gloo / t:10.2f} {t / gloo:9.2f}" if gloo and name != "gloo" else f"{'':>10} {'':>9}"
            print(
                f"{human(nbytes):>8} {name:>9} {t * 1e6:11.1f} {algbw:10.3f} {algbw * factor:10.3f} "
                f"{bound:11.2f} {ratio}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--world", default="2,4", help="world sizes, e.g. 2,4")
    parser.add_argument("--min-size", default="4K")
    parser.add_argument("--max-size", default="64M")
    parser.add_argument("--algorithms", default="auto,ring,tree,star")
    parser.add_argument("--budget", type=float, default=0.2, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="measurements per size (best kept)")
    parser.add_argument("--no-gloo", action="store_true", help="skip PyTorch's gloo")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        args.sizes = [int(s) for s in args.sizes.split(",")]
        worker(args)
        return
    args.sizes = sizes_between(parse_size(args.min_size), parse_size(args.max_size))
    for world in (int(w) for w in args.world.split(",")):
        report(world, run_world(world, args), args.algorithms.split(","), args.sizes)


if __name__ == "__main__":
    main()
