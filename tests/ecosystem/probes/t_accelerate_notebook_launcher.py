# library: accelerate
"""Accelerator(gradient_accumulation_steps=2) in 2 processes started by notebook_launcher (failed at its torch.numa.binding import before the fix): accumulate, sync_gradients, gather_for_metrics on an uneven eval set, reduce, pad_across_processes, save_state/load_state, split_between_processes."""

import os
import warnings

import torch
from accelerate import Accelerator, notebook_launcher
from accelerate.utils import set_seed
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")


def train():
    torch.set_num_threads(1)
    acc = Accelerator(cpu=True, gradient_accumulation_steps=2)
    set_seed(0)
    X = torch.randn(48, 5)
    Y = (X[:, :2].sum(1) > 0).long()
    model = nn.Sequential(nn.Linear(5, 16), nn.GELU(), nn.Linear(16, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.LinearLR(opt, 1.0, 0.1, total_iters=6)
    tr = DataLoader(TensorDataset(X[:32], Y[:32]), batch_size=4, shuffle=True)
    ev = DataLoader(TensorDataset(X[32:43], Y[32:43]), batch_size=4)
    model, opt, tr, ev, sched = acc.prepare(model, opt, tr, ev, sched)
    syncs, losses = [], []
    for _epoch in range(2):
        model.train()
        for x, y in tr:
            with acc.accumulate(model):
                loss = nn.functional.cross_entropy(model(x), y)
                acc.backward(loss)
                if acc.sync_gradients:
                    acc.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                sched.step()
                opt.zero_grad()
            syncs.append(int(acc.sync_gradients))
            losses.append(acc.reduce(loss.detach(), "mean").item())
    model.eval()
    preds, labels = [], []
    for x, y in ev:
        with torch.no_grad():
            p = model(x).argmax(-1)
        p, y = acc.gather_for_metrics((p, y))
        preds.append(p)
        labels.append(y)
    preds, labels = torch.cat(preds), torch.cat(labels)
    ragged = torch.arange(acc.process_index + 2)
    padded = acc.pad_across_processes(ragged, dim=0, pad_index=-1)
    allp = acc.gather(padded)
    with acc.split_between_processes(list(range(5))) as part:
        mine = list(part)
    parts = acc.gather_for_metrics([mine], use_gather_object=True)
    acc.save_state("state")
    w = [p.detach().clone() for p in model.parameters()]
    x0, y0 = next(iter(tr))
    nn.functional.cross_entropy(model(x0), y0).backward()
    opt.step()
    acc.load_state("state")
    same = all(torch.equal(a, b.detach()) for a, b in zip(w, model.parameters()))
    acc.wait_for_everyone()
    acc.print("procs", acc.num_processes, acc.distributed_type, acc.gradient_accumulation_steps)
    acc.print("syncs", syncs)
    acc.print("losses", [f"{v:.5f}" for v in losses])
    acc.print("lr", f"{sched.get_last_lr()[0]:.6f}", "steps", opt.state_dict()["state"][0]["step"].item())
    acc.print("eval", len(preds), len(labels), f"{(preds == labels).float().mean().item():.5f}")
    acc.print("padded", allp.tolist())
    acc.print("split", parts)
    acc.print("restored", same, sorted(os.listdir("state")))
    unwrapped = acc.unwrap_model(model)
    acc.print("unwrap", type(unwrapped).__name__, sorted(acc.get_state_dict(model))[:2])
    acc.print("accelerate accum ok")


if __name__ == "__main__":
    notebook_launcher(train, num_processes=2)
