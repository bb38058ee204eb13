"""Data-parallel training from scratch: average the gradients by hand, then let DDP do it.

    disttorch-launch --nproc 4 examples/ddp_from_scratch.py
    python examples/ddp_from_scratch.py          # a world of one

Data parallelism rests on one identity. With the loss a mean over the batch, the gradient
on a batch of ``N * b`` samples is the mean of the gradients on ``N`` slices of ``b``:

    grad( mean over N*b samples ) = mean over ranks of grad( mean over that rank's b samples )

So each of ``N`` ranks runs forward and backward on its own slice, the ranks average their
gradients (an all-reduce, then a division by ``N``), and every rank applies the same
update to the same parameters: they stay identical without ever being sent.

This script trains the same small network three ways, from the same initial weights:

1. **by hand**: ``loss.backward()``, then ``dist.all_reduce(p.grad)`` and ``p.grad /= N``
   for every parameter, then ``optimizer.step()``;
2. **DDP**: ``DistributedDataParallel(model)``, which does the same during backward, in
   buckets, overlapping the communication with the rest of backward;
3. **one process on the combined batch** of ``N * b`` samples (every rank computes it
   locally, to compare).

and prints how far apart the parameters end up (within float32 rounding: the sums are
done in a different order), and whether every rank holds exactly the same parameters.
"""

from __future__ import annotations

import argparse
import atexit
import copy
import os
import shutil
import tempfile

import disttorch as torch
import disttorch.distributed as dist
import disttorch.nn as nn
import disttorch.nn.functional as F
from disttorch.nn.parallel import DistributedDataParallel as DDP


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=8, help="per rank")
    p.add_argument("--lr", type=float, default=0.05)
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


def average_gradients(model: nn.Module) -> None:
    """What DDP does, by hand: sum every gradient over the ranks, divide by their number."""
    world = dist.get_world_size()
    for p in model.parameters():
        dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
        p.grad /= world


def batch(step: int, rows: slice, batch_size: int, world: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows ``rows`` of the step's global batch of ``world * batch_size`` samples (same on all ranks)."""
    g = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(world * batch_size, 10, generator=g)
    y = (x[:, :3].sum(dim=1, keepdim=True) > 0).float()  # a simple rule for the network to learn
    return x[rows], y[rows]


def train(model: nn.Module, args: argparse.Namespace, rows: slice, by_hand: bool) -> list[float]:
    """SGD with momentum on ``rows`` of every global batch; returns the losses."""
    world = dist.get_world_size()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    losses = []
    for step in range(args.steps):
        x, y = batch(step, rows, args.batch_size, world)
        loss = F.binary_cross_entropy_with_logits(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        if by_hand:
            average_gradients(model)
        optimizer.step()
        losses.append(loss.item())
    return losses


def max_difference(a: nn.Module, b: nn.Module) -> float:
    return max((p - q).abs().max().item() for p, q in zip(a.parameters(), b.parameters()))


def main() -> None:
    args = parse_args()
    init_distributed()
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # the same initial weights on every rank
    model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 1))
    mine = slice(rank * args.batch_size, (rank + 1) * args.batch_size)

    by_hand = copy.deepcopy(model)
    train(by_hand, args, mine, by_hand=True)

    with_ddp = copy.deepcopy(model)
    train(DDP(with_ddp), args, mine, by_hand=False)

    single = copy.deepcopy(model)
    losses = train(single, args, slice(None), by_hand=False)

    # Are the parameters bit for bit the same on every rank? Compare them with rank 0's.
    params = torch.cat([p.detach().reshape(-1) for m in (by_hand, with_ddp) for p in m.parameters()])
    reference = params.clone()
    dist.broadcast(reference, src=0)
    same = torch.tensor([int(torch.equal(params, reference))])
    dist.all_reduce(same, op=dist.ReduceOp.MIN)

    if rank == 0:
        print(f"{world} rank(s) x batch {args.batch_size}, {args.steps} steps of SGD with momentum")
        print(f"loss of the combined batch: {losses[0]:.4f} at step 1, {losses[-1]:.4f} at step {args.steps}")
        rows = [
            ("by hand - DDP", max_difference(by_hand, with_ddp)),
            (
                f"by hand - one process on the batch of {world * args.batch_size}",
                max_difference(by_hand, single),
            ),
        ]
        width = max(len(label) for label, _ in rows)
        for label, value in rows:
            print(f"max |{label}|{' ' * (width - len(label))} = {value:.3g}")
        print(f"parameters identical on every rank: {bool(same.item())}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
