# library: lightning
"""Lightning Trainer(strategy="ddp", devices=2, accelerator="cpu"): automatic optimisation across two processes, a DistributedSampler, sync_dist logging, the weights equal on both ranks after fit."""

import warnings

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")


class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 1)

    def training_step(self, b, i):
        loss = torch.nn.functional.mse_loss(self.lin(b[0]), b[1])
        self.log("loss", loss, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    torch.set_num_threads(1)
    L.seed_everything(0, verbose=False)
    X = torch.randn(32, 4)
    Y = X @ torch.tensor([[1.0], [2.0], [-1.0], [0.5]])
    m = M()
    t = L.Trainer(
        strategy="ddp",
        devices=2,
        accelerator="cpu",
        max_epochs=3,
        enable_progress_bar=False,
        enable_model_summary=False,
        logger=False,
        enable_checkpointing=False,
    )
    t.fit(m, DataLoader(TensorDataset(X, Y), batch_size=4))
    w = m.lin.weight.detach().clone()
    gathered = t.strategy.all_gather(w)
    if t.global_rank == 0:
        print("world", t.world_size, "steps", t.global_step, "loss %.5f" % t.callback_metrics["loss"].item())
        print(
            "weights",
            [round(v, 5) for v in w.flatten().tolist()],
            "same on ranks",
            bool(torch.equal(gathered[0], gathered[1])),
        )
