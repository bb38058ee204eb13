# library: lightning
"""Lightning's Tuner (lr_find with its suggestion applied, scale_batch_size in power mode), torchmetrics metric objects logged from a LightningModule (epoch accumulation), ModelSummary, EarlyStopping with stopping_threshold."""

import warnings

import lightning as L
import torch
import torch.nn.functional as F
import torchmetrics
from lightning.pytorch.callbacks import EarlyStopping, ModelSummary
from lightning.pytorch.tuner import Tuner
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")
torch.set_num_threads(1)


def f(x):
    return f"{float(x):.5f}"


g = torch.Generator().manual_seed(0)
X = torch.randn(256, 5, generator=g)
Y = (X[:, 0] - X[:, 2] > 0).long()


class M(L.LightningModule):
    def __init__(self, lr=1e-3, batch_size=8):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 2))
        self.acc = torchmetrics.classification.MulticlassAccuracy(2)
        self.f1 = torchmetrics.classification.MulticlassF1Score(2)

    def training_step(self, b, i):
        logits = self.net(b[0])
        loss = F.cross_entropy(logits, b[1])
        self.acc(logits, b[1])
        self.log("train_acc", self.acc, on_epoch=True, on_step=False)
        return loss

    def validation_step(self, b, i):
        logits = self.net(b[0])
        self.f1(logits, b[1])
        self.log("val_f1", self.f1)
        self.log("val_loss", F.cross_entropy(logits, b[1]))

    def train_dataloader(self):
        return DataLoader(
            TensorDataset(X[:192], Y[:192]),
            batch_size=self.hparams.batch_size,
            shuffle=True,
            generator=torch.Generator().manual_seed(1),
        )

    def val_dataloader(self):
        return DataLoader(TensorDataset(X[192:], Y[192:]), batch_size=16)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)


L.seed_everything(0, verbose=False)
m = M()
t = L.Trainer(
    accelerator="cpu",
    max_epochs=3,
    logger=False,
    enable_checkpointing=False,
    enable_progress_bar=False,
    callbacks=[ModelSummary(max_depth=2)],
)
tuner = Tuner(t)
res = tuner.lr_find(m, min_lr=1e-4, max_lr=1.0, num_training=20, early_stop_threshold=None)
print("lr_find", len(res.results["lr"]), f(res.suggestion()), f(m.hparams.lr))
L.seed_everything(0, verbose=False)
m2 = M()
t2 = L.Trainer(
    accelerator="cpu",
    max_epochs=1,
    logger=False,
    enable_checkpointing=False,
    enable_progress_bar=False,
    enable_model_summary=False,
)
bs = Tuner(t2).scale_batch_size(m2, mode="power", steps_per_trial=2, init_val=4, max_trials=3)
print("batch size", bs)
L.seed_everything(0, verbose=False)
m3 = M(lr=0.3)
t3 = L.Trainer(
    accelerator="cpu",
    max_epochs=20,
    logger=False,
    enable_checkpointing=False,
    enable_progress_bar=False,
    enable_model_summary=False,
    callbacks=[EarlyStopping("val_f1", mode="max", stopping_threshold=0.9, patience=5)],
)
t3.fit(m3)
print("early stop", t3.current_epoch, f(t3.callback_metrics["val_f1"]), f(t3.callback_metrics["train_acc"]))

print("lightning", L.__version__, "ok")
