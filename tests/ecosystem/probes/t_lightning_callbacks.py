# library: lightning
"""Lightning callbacks and loops: LearningRateMonitor, StochasticWeightAveraging, deterministic, ModelSummary depth, log_dict, hooks order, limit_train_batches/val_check_interval, CSVLogger."""

import csv
import os
import warnings

import lightning as L
import torch
from lightning.pytorch.callbacks import (
    Callback,
    GradientAccumulationScheduler,
    LearningRateMonitor,
    ModelCheckpoint,
    StochasticWeightAveraging,
)
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.utilities.model_summary import summarize
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")
torch.set_num_threads(1)
L.seed_everything(0, verbose=False)
X = torch.randn(64, 6)
Y = (X[:, :3].sum(1, keepdim=True) > 0).float()
calls = []


class M(L.LightningModule):
    def __init__(self, lr=0.1):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(
            nn.Linear(6, 8),
            nn.BatchNorm1d(8),
            nn.ReLU(),
            nn.Sequential(nn.Linear(8, 4), nn.Tanh()),
            nn.Linear(4, 1),
        )
        self.example_input_array = torch.zeros(2, 6)

    def forward(self, x):
        return self.net(x)

    def training_step(self, b, i):
        x, y = b
        loss = nn.functional.binary_cross_entropy_with_logits(self(x), y)
        self.log_dict(
            {"train_loss": loss, "bs": float(x.shape[0])}, on_step=True, on_epoch=True, prog_bar=False
        )
        return loss

    def validation_step(self, b, i):
        x, y = b
        loss = nn.functional.binary_cross_entropy_with_logits(self(x), y)
        self.log_dict({"val_loss": loss, "val_acc": ((self(x) > 0).float() == y).float().mean()})

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)
        sch = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sch, "interval": "epoch"}}

    def on_fit_start(self):
        calls.append("fit_start")

    def on_train_epoch_start(self):
        calls.append("tes")

    def on_train_epoch_end(self):
        calls.append("tee")

    def on_validation_epoch_start(self):
        calls.append("ves")

    def on_validation_epoch_end(self):
        calls.append("vee")

    def on_before_optimizer_step(self, opt):
        calls.append("bos") if len(calls) < 12 else None

    def on_train_end(self):
        calls.append("train_end")


class Rec(Callback):
    def __init__(self):
        self.rows = []

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.rows.append((trainer.global_step, round(float(outputs["loss"]), 5)))


dl = DataLoader(TensorDataset(X, Y), batch_size=8)
vdl = DataLoader(TensorDataset(X[:16], Y[:16]), batch_size=8)
m = M()
print(str(summarize(m, max_depth=2)))
print(str(summarize(m, max_depth=-1)).splitlines()[-4:])
rec = Rec()
logger = CSVLogger(os.getcwd(), name="csv", version=0)
tr = L.Trainer(
    max_epochs=4,
    logger=logger,
    callbacks=[
        LearningRateMonitor(logging_interval="epoch"),
        StochasticWeightAveraging(swa_lrs=0.05, swa_epoch_start=2),
        rec,
        ModelCheckpoint(monitor="val_loss", save_top_k=2, filename="{epoch}-{val_loss:.3f}"),
    ],
    deterministic=True,
    enable_progress_bar=False,
    limit_train_batches=5,
    val_check_interval=0.5,
    log_every_n_steps=2,
    num_sanity_val_steps=1,
    enable_model_summary=False,
)
tr.fit(m, dl, vdl)
print("steps", tr.global_step, rec.rows[:6])
print("calls", calls[:14])
print("metrics", {k: round(float(v), 4) for k, v in sorted(tr.callback_metrics.items())})
print("lr", [round(g["lr"], 5) for g in tr.optimizers[0].param_groups])
logger.save()
with open(os.path.join(logger.log_dir, "metrics.csv")) as f:
    rows = list(csv.DictReader(f))
print("csv cols", sorted(rows[0].keys()))
print("csv n", len(rows), [(r["step"], r.get("lr-SGD", "")) for r in rows if r.get("lr-SGD")])
print("ckpt", sorted(os.path.basename(p) for p in os.listdir(tr.checkpoint_callback.dirpath)))
print(
    "best",
    os.path.basename(tr.checkpoint_callback.best_model_path),
    round(float(tr.checkpoint_callback.best_model_score), 4),
)
res = tr.validate(m, vdl, verbose=False)
print("validate", {k: round(v, 4) for k, v in res[0].items()})
m2 = M.load_from_checkpoint(tr.checkpoint_callback.best_model_path)
print("hp", dict(m2.hparams))
# grad accumulation scheduler + fit with limit and max_steps
L.seed_everything(1, verbose=False)
m3 = M(lr=0.05)
tr2 = L.Trainer(
    max_steps=7,
    logger=False,
    enable_checkpointing=False,
    enable_progress_bar=False,
    enable_model_summary=False,
    callbacks=[GradientAccumulationScheduler({0: 2, 1: 1})],
    limit_val_batches=0,
    deterministic=True,
)
tr2.fit(m3, dl)
print("accum", tr2.global_step, tr2.current_epoch, round(float(m3.net[0].weight.sum()), 5))
preds = tr2.predict(m3, DataLoader(X[:10], batch_size=4))
print("predict", [p.shape for p in preds], round(float(torch.cat(preds).sum()), 5))
