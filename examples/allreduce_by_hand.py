"""Ring all-reduce written by hand with send/recv, step by step, then checked against dist.all_reduce.

    disttorch-launch --nproc 4 examples/allreduce_by_hand.py
    python examples/allreduce_by_hand.py          # a world of one: nothing to exchange

Every rank holds a tensor of ``n`` chunks (``n`` = number of ranks). Rank ``r`` holds
``10**r * [1, 2, 3, ...]``, so in a sum each decimal digit tells which ranks have
contributed: 1111 is all four ranks' values of 1, 0110 is ranks 1 and 2 only.

The ranks stand in a circle and each talks only to its neighbours: it sends to the rank
on its right, ``(r + 1) % n``, and receives from the rank on its left, ``(r - 1) % n``.

1. Reduce-scatter, ``n - 1`` steps: in step ``k`` rank ``r`` sends chunk ``(r - k - 1) % n``
   and adds the chunk ``(r - k - 2) % n`` it receives into its own copy. A chunk picks up
   one more rank's values at every hop; afterwards rank ``r`` holds the full sum of chunk ``r``.
2. All-gather, ``n - 1`` steps: in step ``k`` rank ``r`` sends chunk ``(r - k) % n`` (its
   finished one first, then the one it just received) and copies the chunk it receives.

Each rank sends ``2 (n - 1)`` chunks of ``1/n`` of the tensor, whatever the number of
ranks: this is why the ring is the algorithm of choice for large gradients. The schedule
is the one of ``disttorch/distributed/algorithms/ring.py`` (its helper functions
``reduce_scatter_blocks`` and ``all_gather_blocks`` give the chunk numbers used here).

Every rank records what it did; rank 0 gathers the records and prints one table per step.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import tempfile

import disttorch as torch
import disttorch.distributed as dist
from disttorch.distributed.algorithms.ring import all_gather_blocks, reduce_scatter_blocks


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--chunk", type=int, default=2, help="elements per chunk (default 2)")
    return p.parse_args()


def init_distributed() -> None:
    """The launcher's environment (env://), or a world of one for plain ``python``."""
    if "WORLD_SIZE" in os.environ:
        dist.init_process_group()
    else:
        folder = tempfile.mkdtemp()
        atexit.register(shutil.rmtree, folder, True)  # the store's file goes when the process ends
        store = os.path.join(folder, "store")
        dist.init_process_group(init_method=f"file://{store}", rank=0, world_size=1)


def show(t: torch.Tensor, chunk: int) -> str:
    """``[1 2 | 3 4 | ...]``: the tensor cut into its chunks."""
    values = [f"{v:>{5}}" for v in t.tolist()]
    return "[" + " |".join(" ".join(values[i : i + chunk]) for i in range(0, len(values), chunk)) + " ]"


def exchange(outgoing: torch.Tensor, right: int, incoming: torch.Tensor, left: int) -> None:
    """Send to the right neighbour while receiving from the left one.

    ``isend`` first, so that no rank waits for its neighbour to post a receive: if
    every rank called the blocking ``send`` first, all ranks would wait forever.
    """
    sending = dist.isend(outgoing, dst=right)
    dist.recv(incoming, src=left)
    sending.wait()


def ring_all_reduce(x: torch.Tensor, chunk: int) -> list[str]:
    """Sum ``x`` across ranks in place, chunk by chunk around the ring; returns what happened."""
    rank, n = dist.get_rank(), dist.get_world_size()
    right, left = (rank + 1) % n, (rank - 1) % n
    chunks = list(x.split(chunk))  # views: writing into a chunk writes into x
    incoming = torch.empty(chunk, dtype=x.dtype)
    log = []
    for step in range(n - 1):
        send_i, recv_i = reduce_scatter_blocks(rank, step, n)
        exchange(chunks[send_i].clone(), right, incoming, left)
        chunks[recv_i] += incoming
        log.append(
            f"reduce-scatter step {step}: rank {rank} sends chunk {send_i} to rank {right}, "
            f"adds   chunk {recv_i} from rank {left} -> {show(x, chunk)}"
        )
    for step in range(n - 1):
        send_i, recv_i = all_gather_blocks(rank, step, n)
        exchange(chunks[send_i].clone(), right, incoming, left)
        chunks[recv_i].copy_(incoming)
        log.append(
            f"all-gather     step {step}: rank {rank} sends chunk {send_i} to rank {right}, "
            f"copies chunk {recv_i} from rank {left} -> {show(x, chunk)}"
        )
    return log


def main() -> None:
    args = parse_args()
    init_distributed()
    rank, n = dist.get_rank(), dist.get_world_size()
    values = 10**rank * torch.arange(1, n * args.chunk + 1, dtype=torch.int64)
    start = [None] * n
    dist.all_gather_object(start, show(values, args.chunk))

    by_hand = values.clone()
    log = ring_all_reduce(by_hand, args.chunk)
    logs = [None] * n
    dist.all_gather_object(logs, log)

    library = values.clone()
    dist.all_reduce(library, op=dist.ReduceOp.SUM)
    agree = torch.equal(by_hand, library)
    everyone_agrees = torch.tensor([int(agree)])
    dist.all_reduce(everyone_agrees, op=dist.ReduceOp.MIN)

    if rank == 0:
        print(f"ring all-reduce by hand on {n} rank(s), {n} chunks of {args.chunk} elements each")
        print("rank r starts with 10**r * [1, 2, ...]; each digit of a sum tells which ranks are in it\n")
        for r, text in enumerate(start):
            print(f"  rank {r} starts with {text}")
        for step in range(2 * (n - 1)):
            print()
            for r in range(n):
                print("  " + logs[r][step])
        if n == 1:
            print("\n  (one rank: nothing to exchange; run with disttorch-launch --nproc 4 to see the ring)")
        print(f"\nby hand         : {show(by_hand, args.chunk)}")
        print(f"dist.all_reduce : {show(library, args.chunk)}")
        print(f"every rank agrees with dist.all_reduce: {bool(everyone_agrees.item())}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
