"""Classify real handwritten digits with data-parallel training.

    disttorch-launch --nproc 4 examples/train_digits.py     # 4 ranks
    python examples/train_digits.py                           # one process, same result

The data is the UCI optical digits set shipped with disttorch (3,823 training and 1,797
test images of 8x8 pixels; the test digits were written by other people). Each rank
trains on its own quarter of every epoch (DistributedSampler), DistributedDataParallel
averages the gradients during backward, and every rank takes the same optimiser step.
Rank 0 draws a progress bar, saves a checkpoint after every epoch (``--resume`` continues
from the latest, as does a restart by ``disttorch-launch --max-restarts N``) and prints the
test accuracy at the end. Resume with the same ``--epochs``: the learning-rate schedule
is saved with the checkpoint. Rank 0 locks the checkpoint folder while it runs: a second
run started on the same folder stops at once and says so (give it its own ``--checkpoint-dir``).

The script is written against PyTorch's API: replace ``import disttorch as torch`` by
``import torch`` (and the two disttorch-only imports) and it runs under torchrun.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import socket
import time
from typing import IO

import disttorch as torch
import disttorch.distributed as dist
import disttorch.nn as nn
import disttorch.nn.functional as F
from disttorch.datasets import load_digits
from disttorch.nn.parallel import DistributedDataParallel as DDP
from disttorch.utils.data import DataLoader, DistributedSampler, TensorDataset
from disttorch.utils.resume import Checkpointer
from disttorch.viz import MetricsLog, ProgressBar


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=15)
    p.add_argument("--batch-size", type=int, default=32, help="per rank (global batch = world size x this)")
    p.add_argument("--lr", type=float, default=1e-2, help="peak learning rate of Adam (one-cycle schedule)")
    p.add_argument(
        "--bucket-cap-mb",
        type=float,
        default=25.0,
        help="DDP gradient bucket size in MiB; the model has 0.27 MiB of gradients, so try 0.1 to see "
        "several buckets overlap with backward (--trace-dir)",
    )
    p.add_argument(
        "--max-steps", type=int, default=None, help="stop each epoch after this many steps (short runs)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--checkpoint-dir", default="checkpoints/digits", help="'' to save no checkpoints")
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue from the latest checkpoint (automatic when the launcher restarts the job)",
    )
    p.add_argument(
        "--log-metrics", default=None, metavar="DIR", help="write DIR/rank<k>.jsonl (for disttorch-plot)"
    )
    return p.parse_args()


class DigitNet(nn.Module):
    """Two 3x3 convolutions and a max-pool (8x8 -> 4x4), then two linear layers."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = nn.Linear(32 * 4 * 4, 128)
        self.fc2 = nn.Linear(128, 10)
        self.dropout = nn.Dropout(0.25)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout(F.relu(self.fc1(torch.flatten(x, 1))))
        return self.fc2(x)


def lock_folder(folder: str) -> IO[str]:
    """Lock the checkpoint folder for this run: two runs writing one folder would overwrite
    each other's checkpoints. Returns the open lock file (the lock lasts while it is open, and
    the system drops it when the process ends, however it ends); raises if another run holds it."""
    os.makedirs(folder, exist_ok=True)
    lock = open(os.path.join(folder, ".lock"), "a+", encoding="utf-8")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        holder = lock.read().strip() or "another process"
        lock.close()
        raise RuntimeError(
            f"checkpoint folder {folder!r} is in use by another run ({holder}); wait for it to end, "
            f"or give this run its own folder with --checkpoint-dir"
        ) from None
    lock.seek(0)
    lock.truncate()
    lock.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
    lock.flush()
    return lock


def accuracy(model: nn.Module, images: torch.Tensor, labels: torch.Tensor) -> float:
    model.eval()
    with torch.no_grad():
        predicted = model(images).argmax(dim=1)
    model.train()
    return (predicted == labels).float().mean().item()


def main() -> None:
    args = parse_args()
    launched = "WORLD_SIZE" in os.environ  # set by disttorch-launch (and torchrun)
    if launched:
        dist.init_process_group()
    rank = dist.get_rank() if launched else 0
    world = dist.get_world_size() if launched else 1
    torch.manual_seed(args.seed)

    train_images, train_labels = load_digits("train")
    test_images, test_labels = load_digits("test")
    train_set = TensorDataset(train_images, train_labels)
    sampler = DistributedSampler(train_set, num_replicas=world, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, drop_last=True)
    steps = len(loader) if args.max_steps is None else min(args.max_steps, len(loader))

    net = DigitNet()
    model = DDP(net, bucket_cap_mb=args.bucket_cap_mb) if launched else net
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, total_steps=args.epochs * steps
    )
    if args.checkpoint_dir and rank == 0:
        folder_lock = lock_folder(args.checkpoint_dir)  # noqa: F841 - held until this process ends
    ckpt = Checkpointer(args.checkpoint_dir or ".", model=net, optimizer=optimizer, scheduler=scheduler)
    start_epoch = 0
    restarted = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")) > 0  # disttorch-launch --max-restarts
    if args.resume or restarted:
        start_epoch = ckpt.load_latest().epoch
        if scheduler.total_steps != args.epochs * steps:  # the checkpoint's schedule was loaded
            raise SystemExit(
                f"{ckpt.latest_path()} was saved by a run of {scheduler.total_steps} steps, and "
                f"this one asks for {args.epochs * steps} (--epochs {args.epochs} x {steps} steps per "
                "epoch): its learning-rate schedule cannot stretch. Resume with that run's --epochs, "
                "--batch-size, --max-steps and number of ranks, or start anew with another "
                "--checkpoint-dir"
            )
        if rank == 0:
            where = ckpt.latest_path()
            if where is None:
                print("nothing to resume: starting at epoch 1", flush=True)
            elif start_epoch >= args.epochs:
                print(
                    f"{where} is the end of a finished run ({start_epoch} of {args.epochs} epochs): nothing "
                    f"to train; the test accuracy of that model follows. A new run needs another "
                    f"--checkpoint-dir (or no --resume)",
                    flush=True,
                )
            else:
                print(f"resuming from {where} at epoch {start_epoch + 1}", flush=True)
    metrics = MetricsLog(args.log_metrics, append=args.resume) if args.log_metrics else None
    if rank == 0:
        print(
            f"{world} rank(s), {len(train_set)} training images, {steps} steps of "
            f"{world} x {args.batch_size} images per epoch",
            flush=True,
        )

    started = time.perf_counter()
    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)  # a new shuffle every epoch, the same on every rank
        bar = ProgressBar(steps, desc=f"epoch {epoch + 1}/{args.epochs}", disable=rank != 0)
        for step, (x, y) in enumerate(loader):
            if step == steps:
                break
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()  # DDP averages the gradients across ranks here
            optimizer.step()
            scheduler.step()
            bar.update(1, loss=loss.item(), samples=len(x) * world)
            if metrics is not None:
                metrics.write(epoch=epoch, step=epoch * steps + step + 1, loss=loss.item())
        bar.close()
        if args.checkpoint_dir:
            path = ckpt.save(epoch + 1, 0)  # every rank calls it; rank 0 writes atomically
            if rank == 0:
                print(f"saved {path}", flush=True)

    if rank == 0:
        seconds = time.perf_counter() - started
        if start_epoch < args.epochs:
            print(f"trained {args.epochs - start_epoch} epoch(s) in {seconds:.1f} s", flush=True)
        print(
            f"test accuracy: {100 * accuracy(net, test_images, test_labels):.2f}% "
            f"({len(test_labels)} test images)",
            flush=True,
        )
    if metrics is not None:
        metrics.close()
    if launched:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
