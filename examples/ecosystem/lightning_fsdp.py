"""Lightning's FSDP strategies on CPU, an unmodified PyTorch program.

``Trainer(strategy="fsdp")``, ``Trainer(strategy=FSDPStrategy())`` and
``Fabric(strategy="fsdp")`` refuse a CPU accelerator (Lightning checks it before any
process group exists), so the script prints their errors. Lightning's other route to
sharding, ``ModelParallelStrategy``, runs on CPU: ``configure_model`` applies
``fully_shard`` to each block and to the root, and every rank keeps half of each parameter
and of the AdamW state.

Run it on disttorch's process group, or on PyTorch's, the same way::

    disttorch-launch --as-torch --nproc 2 examples/ecosystem/lightning_fsdp.py
    torchrun --nproc-per-node 2 examples/ecosystem/lightning_fsdp.py   # PyTorch

Rank 0 prints the refusals, every epoch's mean training loss, the final validation loss and
the shape of its shard of each parameter.
"""

import os

import lightning as L
import torch
import torch.nn.functional as F
from lightning.pytorch.strategies import FSDPStrategy, ModelParallelStrategy
from torch.distributed.fsdp import fully_shard
from torch.utils.data import DataLoader, TensorDataset


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)

    def forward(self, x):
        return x + torch.tanh(self.fc(x))


class Regressor(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 16), Block(), Block(), torch.nn.Linear(16, 1))
        self.epoch_losses: list = []
        self.shards: list = []

    def configure_model(self):
        mesh = self.device_mesh["data_parallel"]
        for block in self.net[1:3]:
            fully_shard(block, mesh=mesh)
        fully_shard(self.net, mesh=mesh)

    def on_fit_start(self):
        for name, param in self.net.named_parameters():
            self.shards.append(f"{name} local shard {tuple(param.to_local().shape)}")

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        self.log("train_loss", loss, on_step=False, on_epoch=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.mse_loss(self.net(x), y), sync_dist=True)

    def on_train_epoch_end(self):
        self.epoch_losses.append(float(self.trainer.callback_metrics["train_loss"]))

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=0.01)


def trainer(strategy) -> L.Trainer:
    return L.Trainer(
        accelerator="cpu",
        strategy=strategy,
        devices=2,
        max_epochs=3,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        logger=False,
    )


def main() -> None:
    torch.set_num_threads(1)
    refused = {
        "Trainer(strategy='fsdp')": lambda: trainer("fsdp"),
        "Trainer(strategy=FSDPStrategy())": lambda: trainer(FSDPStrategy()),
        "Fabric(strategy='fsdp')": lambda: L.Fabric(accelerator="cpu", strategy="fsdp", devices=2),
    }
    for what, make in refused.items():
        try:
            make()
        except ValueError as error:
            if os.environ["RANK"] == "0":
                print(f"{what}: ValueError: {error}")
    L.seed_everything(0, verbose=False)
    x = torch.randn(256, 8)
    y = (x[:, :4].sum(1, keepdim=True) - x[:, 4:].prod(1, keepdim=True)).tanh()
    train = DataLoader(TensorDataset(x[:192], y[:192]), batch_size=16, shuffle=True)
    val = DataLoader(TensorDataset(x[192:], y[192:]), batch_size=32)
    model = Regressor()
    fit = trainer(ModelParallelStrategy(data_parallel_size=2, tensor_parallel_size=1))
    fit.fit(model, train, val)
    if fit.global_rank == 0:
        print("world size", fit.world_size)
        for epoch, loss in enumerate(model.epoch_losses):
            print(f"epoch {epoch} train_loss {loss:.6f}")
        print(f"val_loss {float(fit.callback_metrics['val_loss']):.6f}")
        print("\n".join(model.shards))


if __name__ == "__main__":
    main()
