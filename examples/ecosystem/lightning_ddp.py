"""Lightning's ``Trainer(strategy="ddp", devices=2)`` on CPU, an unmodified PyTorch program.

Run it on disttorch's process group, or on PyTorch's, the same way::

    disttorch-launch --as-torch --nproc 2 examples/ecosystem/lightning_ddp.py
    torchrun --nproc-per-node 2 examples/ecosystem/lightning_ddp.py   # PyTorch

Each rank trains on its half of the data (Lightning's DistributedSampler) and DDP averages
the gradients; rank 0 prints every epoch's mean training loss and the final validation loss.
"""

import lightning as L
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Regressor(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
        self.epoch_losses: list = []

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
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main() -> None:
    torch.set_num_threads(1)
    L.seed_everything(0, verbose=False)
    x = torch.randn(256, 8)
    y = (x[:, :4].sum(1, keepdim=True) - x[:, 4:].prod(1, keepdim=True)).tanh()
    train = DataLoader(TensorDataset(x[:192], y[:192]), batch_size=16, shuffle=True)
    val = DataLoader(TensorDataset(x[192:], y[192:]), batch_size=32)
    model = Regressor()
    trainer = L.Trainer(
        accelerator="cpu",
        strategy="ddp",
        devices=2,
        max_epochs=4,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        logger=False,
    )
    trainer.fit(model, train, val)
    if trainer.global_rank == 0:
        print("world size", trainer.world_size)
        for epoch, loss in enumerate(model.epoch_losses):
            print(f"epoch {epoch} train_loss {loss:.6f}")
        print(f"val_loss {float(trainer.callback_metrics['val_loss']):.6f}")


if __name__ == "__main__":
    main()
