"""An ``accelerate launch``-style training script: ``Accelerator`` prepares the model,
optimizer, dataloader and scheduler, and DDP averages the gradients across the ranks.

Run it on disttorch's process group, or on PyTorch's, the same way::

    disttorch-launch --as-torch --nproc 2 examples/ecosystem/accelerate_ddp.py
    torchrun --nproc-per-node 2 examples/ecosystem/accelerate_ddp.py   # PyTorch

The main process prints each epoch's loss averaged over all ranks (``accelerator.gather``)
and the evaluation loss over the whole validation set (``gather_for_metrics``).
"""

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader, TensorDataset


def main() -> None:
    torch.set_num_threads(1)
    accelerator = Accelerator(cpu=True)
    set_seed(0)
    x = torch.randn(256, 8)
    y = (x[:, :4].sum(1, keepdim=True) - x[:, 4:].prod(1, keepdim=True)).tanh()
    train = DataLoader(TensorDataset(x[:192], y[:192]), batch_size=16, shuffle=True)
    val = DataLoader(TensorDataset(x[192:], y[192:]), batch_size=24)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
    model, opt, train, val, sched = accelerator.prepare(model, opt, train, val, sched)
    for epoch in range(3):
        model.train()
        losses = []
        for xb, yb in train:
            loss = F.mse_loss(model(xb), yb)
            accelerator.backward(loss)
            accelerator.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            losses.append(loss.detach())
        mean = accelerator.gather(torch.stack(losses)).mean()
        accelerator.print(f"epoch {epoch} train_loss {mean.item():.6f}")
    model.eval()
    errors = []
    with torch.no_grad():
        for xb, yb in val:
            errors.append(accelerator.gather_for_metrics((model(xb) - yb) ** 2))
    accelerator.print("processes", accelerator.num_processes, "val rows", torch.cat(errors).shape[0])
    accelerator.print(f"val_loss {torch.cat(errors).mean().item():.6f}")


if __name__ == "__main__":
    main()
