# library: lightning
"""Manual optimisation under Trainer(strategy=DDPStrategy(find_unused_parameters=True), devices=2) launched from a plain script: two optimizers, manual_backward (which re-arms DDP's reducer through torch._C._distributed_c10d.Reducer), clip_gradients, log_dict with sync_dist, all_gather, a LightningDataModule's prepare_data (behind ProcessGroup.monitored_barrier); both failed before the fixes."""

import warnings

import lightning as L
import torch
from lightning.pytorch.strategies import DDPStrategy
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")
torch.set_num_threads(1)


class Manual(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.g = nn.Linear(4, 4)
        self.d = nn.Linear(4, 1)
        self.seen = None

    def training_step(self, b, i):
        og, od = self.optimizers()
        x = b[0]
        ld = self.d(x).pow(2).mean() + self.d(self.g(x).detach()).mean()
        od.zero_grad()
        self.manual_backward(ld)
        self.clip_gradients(od, gradient_clip_val=0.5, gradient_clip_algorithm="norm")
        od.step()
        lg = -self.d(self.g(x)).mean()
        og.zero_grad()
        self.manual_backward(lg)
        og.step()
        self.log_dict({"ld": ld, "lg": lg}, sync_dist=True)
        self.seen = self.all_gather(x[:, 0])

    def configure_optimizers(self):
        return torch.optim.SGD(self.g.parameters(), lr=0.1), torch.optim.Adam(self.d.parameters(), lr=0.05)


class Data(L.LightningDataModule):
    def __init__(self):
        super().__init__()
        self.stages = []

    def prepare_data(self):
        self.stages.append("prepare")

    def setup(self, stage):
        self.stages.append(stage)

    def train_dataloader(self):
        return DataLoader(TensorDataset(torch.randn(48, 4)), batch_size=4)


def main():
    L.seed_everything(1, verbose=False)
    m = Manual()
    t = L.Trainer(
        accelerator="cpu",
        devices=2,
        strategy=DDPStrategy(find_unused_parameters=True),
        max_steps=6,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
    )
    data = Data()
    t.fit(m, datamodule=data)
    if t.global_rank == 0:
        print("manual", t.global_step, {k: f"{float(v):.5f}" for k, v in sorted(t.callback_metrics.items())})
        print("gathered", tuple(m.seen.shape), [str(s) for s in data.stages])
        print(
            "g",
            [f"{v:.5f}" for v in m.g.weight.sum(0).tolist()],
            "d",
            [f"{v:.5f}" for v in m.d.weight[0].tolist()],
        )
        print("lightning ddp manual ok")


if __name__ == "__main__":
    main()
