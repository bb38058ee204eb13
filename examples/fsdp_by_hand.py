"""Fully sharded data parallel by hand: shard, gather, reduce-scatter; then let fully_shard do it.

    disttorch-launch --nproc 4 examples/fsdp_by_hand.py
    python examples/fsdp_by_hand.py              # a world of one

DDP (``ddp_from_scratch.py``) keeps the whole model on every rank. FSDP keeps 1/N of it:
every parameter is cut along its first dimension into N pieces, and rank r keeps piece r
(its *shard*), its gradient and its optimiser state. Training then needs two collectives
per layer and step:

1. **all-gather** before the layer runs: every rank sends its shard and receives the
   others', so for a moment it holds the whole parameter; it is freed once used;
2. **reduce-scatter** of the gradient after backward: every rank sends the whole gradient
   and receives the sum over ranks of *its own piece* only; divided by N it is the mean
   gradient of the piece, exactly what DDP's all-reduce would have given for those rows.

The optimiser then updates each shard with its gradient shard: no rank ever needs the
whole gradient or the whole optimiser state. An all-reduce is a reduce-scatter followed by
an all-gather, so FSDP moves the same bytes as DDP, split around the compute.

This script trains a small network three ways from the same initial weights: by hand
(the two collectives written out), with ``fully_shard``, and in one process on the
combined batch; it prints the first step's collectives, the bytes every rank holds, and
how far apart the results are.
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
from disttorch.distributed.fsdp import fully_shard


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=8, help="per rank")
    p.add_argument("--lr", type=float, default=0.1)
    return p.parse_args()


def init_distributed() -> None:
    """The launcher's environment (env://), or a world of one for plain ``python``.

    The same as in ``ddp_from_scratch.py`` and ``allreduce_by_hand.py``, on purpose: each
    example reads, runs and can be copied on its own."""
    if "WORLD_SIZE" in os.environ:
        dist.init_process_group()
    else:
        folder = tempfile.mkdtemp()
        atexit.register(shutil.rmtree, folder, True)  # the store's file goes when the process ends
        store = os.path.join(folder, "store")
        dist.init_process_group(init_method=f"file://{store}", rank=0, world_size=1)


def batch(step: int, rows: slice, batch_size: int, world: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows ``rows`` of the step's global batch (the same on every rank)."""
    g = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(world * batch_size, 10, generator=g)
    y = (x[:, :3].sum(dim=1, keepdim=True) > 0).float()
    return x[rows], y[rows]


class Shard:
    """One parameter, sharded by hand: this rank's rows, padded so every rank sends as many."""

    def __init__(self, whole: torch.Tensor, rank: int, world: int) -> None:
        self.shape = whole.shape
        self.rows = -(-whole.shape[0] // world)  # rows per piece, the last ones padded
        padded = torch.zeros((self.rows * world,) + tuple(whole.shape[1:]))
        padded[: whole.shape[0]] = whole.detach()
        self.data = padded[rank * self.rows : (rank + 1) * self.rows].clone()  # all this rank keeps
        self.grad = torch.zeros_like(self.data)

    def gather(self, world: int) -> torch.Tensor:
        """All-gather: every rank's piece, concatenated, the padding dropped."""
        out = torch.empty((self.rows * world,) + tuple(self.shape[1:]))
        dist.all_gather_into_tensor(out, self.data)
        return out[: self.shape[0]].clone().requires_grad_()

    def reduce_scatter(self, whole_grad: torch.Tensor, world: int) -> None:
        """Reduce-scatter: the sum over ranks of this rank's rows of the gradient, averaged."""
        padded = torch.zeros((self.rows * world,) + tuple(self.shape[1:]))
        padded[: self.shape[0]] = whole_grad
        dist.reduce_scatter_tensor(self.grad, padded)
        self.grad /= world


def train_by_hand(model: nn.Sequential, args: argparse.Namespace, rows: slice, verbose: bool) -> list[Shard]:
    rank, world = dist.get_rank(), dist.get_world_size()
    layers = [m for m in model if isinstance(m, nn.Linear)]
    shards = [[Shard(layer.weight, rank, world), Shard(layer.bias, rank, world)] for layer in layers]
    for step in range(args.steps):
        x, y = batch(step, rows, args.batch_size, world)
        wholes = []
        h = x
        for i, (w, b) in enumerate(shards):  # forward: gather a layer just before it runs
            weight, bias = w.gather(world), b.gather(world)
            wholes.append((weight, bias))
            h = F.linear(h, weight, bias)
            if i < len(shards) - 1:
                h = torch.tanh(h)
            if verbose and step == 0 and rank == 0:
                print(
                    f"step 0 layer {i}: all-gather weight {tuple(w.data.shape)} x {world} ranks -> "
                    f"{tuple(weight.shape)}, run, free"
                )
        loss = F.binary_cross_entropy_with_logits(h, y)
        loss.backward()
        for i, ((w, b), (weight, bias)) in enumerate(zip(shards, wholes)):  # reduce-scatter, then step
            w.reduce_scatter(weight.grad, world)
            b.reduce_scatter(bias.grad, world)
            if verbose and step == 0 and rank == 0:
                print(
                    f"step 0 layer {i}: reduce-scatter grad {tuple(weight.grad.shape)} -> "
                    f"rank 0 keeps rows 0..{w.rows - 1}"
                )
            for s in (w, b):
                s.data -= args.lr * s.grad
    return shards


def train(model: nn.Module, args: argparse.Namespace, rows: slice) -> None:
    world = dist.get_world_size()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    for step in range(args.steps):
        x, y = batch(step, rows, args.batch_size, world)
        loss = F.binary_cross_entropy_with_logits(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main() -> None:
    args = parse_args()
    init_distributed()
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 1))
    mine = slice(rank * args.batch_size, (rank + 1) * args.batch_size)

    shards = train_by_hand(copy.deepcopy(model), args, mine, verbose=True)

    sharded = copy.deepcopy(model)
    fully_shard(sharded[0])
    fully_shard(sharded[2])
    fully_shard(sharded)
    train(sharded, args, mine)

    single = copy.deepcopy(model)
    train(single, args, slice(None))

    # Memory: what every rank keeps between steps (parameters + gradients; SGD keeps no state)
    whole_bytes = 2 * sum(p.numel() * p.element_size() for p in single.parameters())
    shard_bytes = 2 * sum(p.to_local().numel() * p.element_size() for p in sharded.parameters())
    whole = [p.full_tensor() for p in sharded.parameters()]  # gathered, to compare
    by_hand = [s.gather(world).detach() for pair in shards for s in pair]
    if rank == 0:
        print(f"{world} rank(s) x batch {args.batch_size}, {args.steps} steps")
        print(f"bytes per rank (parameters + gradients): DDP {whole_bytes}, FSDP {shard_bytes}")
        diff_hand = max((a - b).abs().max().item() for a, b in zip(by_hand, whole))
        diff_one = max((a - p).abs().max().item() for a, p in zip(whole, single.parameters()))
        print(f"max |by hand - fully_shard|                   = {diff_hand:.2e}")
        print(f"max |fully_shard - one process on the batch of {world * args.batch_size}| = {diff_one:.2e}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
