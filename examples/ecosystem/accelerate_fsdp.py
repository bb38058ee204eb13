"""Accelerate's FSDP on CPU: ``Accelerator(cpu=True, fsdp_plugin=FullyShardedDataParallelPlugin(...))``.

accelerate 1.15 shards only on an accelerator: with ``cpu=True`` its state is
``DistributedType.MULTI_CPU`` whatever the plugin says (``fsdp_version`` 1 or 2), and
``prepare`` wraps the model in ``DistributedDataParallel``; without ``cpu=True`` on a machine
with no GPU every rank trains alone (``DistributedType.NO``). The plugin is still built and
validated (its policies, state-dict settings and ``torch.distributed.fsdp`` names), and the
script trains to the losses PyTorch gives.

Run it on disttorch's process group, or on PyTorch's, the same way::

    disttorch-launch --as-torch --nproc 2 examples/ecosystem/accelerate_fsdp.py
    torchrun --nproc-per-node 2 examples/ecosystem/accelerate_fsdp.py   # PyTorch

The main process prints the distributed type, each epoch's loss averaged over all ranks, the
evaluation loss over the whole validation set, and the size of ``get_state_dict``.
"""

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import FullyShardedDataParallelPlugin, set_seed
from torch.utils.data import DataLoader, TensorDataset


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)

    def forward(self, x):
        return x + torch.tanh(self.fc(x))


def main() -> None:
    torch.set_num_threads(1)
    plugin = FullyShardedDataParallelPlugin(
        fsdp_version=2,
        auto_wrap_policy="transformer_based_wrap",
        transformer_cls_names_to_wrap=["Block"],
        state_dict_type="FULL_STATE_DICT",
    )
    accelerator = Accelerator(cpu=True, fsdp_plugin=plugin)
    set_seed(0)
    x = torch.randn(256, 8)
    y = (x[:, :4].sum(1, keepdim=True) - x[:, 4:].prod(1, keepdim=True)).tanh()
    train = DataLoader(TensorDataset(x[:192], y[:192]), batch_size=16, shuffle=True)
    val = DataLoader(TensorDataset(x[192:], y[192:]), batch_size=24)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), Block(), Block(), torch.nn.Linear(16, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
    model, opt, train, val, sched = accelerator.prepare(model, opt, train, val, sched)
    accelerator.print("distributed type", accelerator.distributed_type, "fsdp2", accelerator.is_fsdp2)
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
    state = accelerator.get_state_dict(model)
    if accelerator.is_main_process:
        print("full state dict", len(state), "tensors", sum(v.numel() for v in state.values()), "numbers")


if __name__ == "__main__":
    main()
