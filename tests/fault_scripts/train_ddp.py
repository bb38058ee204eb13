"""Test worker: a small DDP training run that checkpoints every step and resumes exactly.

usage: train_ddp.py OUT_DIR [--epochs E] [--every N] [--sleep S] [--hold-at K --hold-file PATH]

Two ranks (any number works) train a tiny MLP with dropout on 32 fixed random samples (4 steps
of batch 4 per epoch on 2 ranks: short, as every fault test runs it at least once), sharded by a
``DistributedSampler``, with SGD + momentum and a StepLR schedule. A ``Checkpointer`` in
OUT_DIR/ckpt saves every N steps and is reloaded at start, so a run restarted by
``--max-restarts`` continues where the latest checkpoint left it. Leaves in OUT_DIR:

- ``pid_rank<R>_attempt<A>``: the worker's pid (written first);
- ``resumed_rank<R>_attempt<A>.json``: ``{"epoch", "step", "global_step"}`` the run started from;
- ``error_rank<R>_attempt<A>.json``: ``{"time", "type", "message"}`` if training raised;
- ``holding_rank<R>_attempt<A>``: written when the run reaches step K and waits for PATH;
- ``params.npy``: rank 0's final parameters, concatenated (float32), at the end.
"""

import argparse
import json
import os
import time

import numpy as np

import disttorch as torch
import disttorch.distributed as dist
import disttorch.nn as nn
import disttorch.nn.functional as F
from disttorch.nn.parallel import DistributedDataParallel as DDP
from disttorch.utils.data import DataLoader, DistributedSampler, TensorDataset
from disttorch.utils.resume import Checkpointer


def hold(path: str, limit: float = 60.0) -> None:
    """Wait until ``path`` exists (at most ``limit`` seconds)."""
    deadline = time.monotonic() + limit
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear within {limit:g} s")
        time.sleep(0.02)


def train(out_dir: str, epochs: int, every: int, sleep: float, hold_at: int, hold_file: str) -> None:
    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    data = TensorDataset(torch.randn(32, 8, generator=g), torch.randint(0, 3, (32,), generator=g))
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=7)
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 3))
    model = DDP(net)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    ckpt = Checkpointer(os.path.join(out_dir, "ckpt"), model=net, optimizer=opt, scheduler=sched)
    state = ckpt.load_latest()
    tag = f"rank{rank}_attempt{os.environ.get('DISTTORCH_RESTART_COUNT', '0')}"
    with open(os.path.join(out_dir, f"resumed_{tag}.json"), "w") as f:
        json.dump({"epoch": state.epoch, "step": state.step, "global_step": state.global_step}, f)
    steps = state.global_step
    for epoch in range(state.epoch, epochs):
        sampler.set_epoch(epoch)
        for step, (x, y) in ckpt.batches(loader, epoch):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            ckpt.save(epoch, step + 1, every=every)
            time.sleep(sleep)
            steps += 1
            if steps == hold_at:
                open(os.path.join(out_dir, f"holding_{tag}"), "w").close()
                hold(hold_file)
        sched.step()
    if rank == 0:
        flat = np.concatenate([p.detach().numpy().ravel() for p in net.parameters()])
        np.save(os.path.join(out_dir, "params.npy"), flat)
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--hold-at", type=int, default=0)
    parser.add_argument("--hold-file", default="")
    args = parser.parse_args()
    tag = f"rank{os.environ['RANK']}_attempt{os.environ.get('DISTTORCH_RESTART_COUNT', '0')}"
    with open(os.path.join(args.out_dir, f"pid_{tag}"), "w") as f:
        f.write(str(os.getpid()))
    try:
        train(args.out_dir, args.epochs, args.every, args.sleep, args.hold_at, args.hold_file)
    except Exception as e:
        with open(os.path.join(args.out_dir, f"error_{tag}.json"), "w") as f:
            json.dump({"time": time.time(), "type": type(e).__name__, "message": str(e)}, f)
        raise


if __name__ == "__main__":
    main()
