# library: lightning
"""Lightning Trainer options: precision="bf16-mixed", accumulate_grad_batches, gradient_clip_val, ModelCheckpoint top-k with ckpt_path="best", LearningRateMonitor."""

import os
import warnings

import lightning as L
import torch
from lightning.pytorch.callbacks import LearningRateMonitor, ModelCheckpoint
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")
torch.set_num_threads(1)
L.seed_everything(0, verbose=False)
g = torch.Generator().manual_seed(0)
X = torch.randn(64, 8, generator=g)
Y = (X[:, :2].sum(1) > 0).long()


class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(8, 16), torch.nn.LayerNorm(16), torch.nn.ReLU(), torch.nn.Linear(16, 2)
        )

    def training_step(self, b, i):
        loss = torch.nn.functional.cross_entropy(self.net(b[0]).float(), b[1])
        self.log("train_loss", loss)
        return loss

    def validation_step(self, b, i):
        self.log("val_loss", torch.nn.functional.cross_entropy(self.net(b[0]).float(), b[1]))

    def test_step(self, b, i):
        self.log("test_loss", torch.nn.functional.cross_entropy(self.net(b[0]).float(), b[1]))

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.2, momentum=0.9)
        return {"optimizer": opt, "lr_scheduler": torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)}


class Show(L.Callback):
    def on_train_epoch_end(self, trainer, module):
        m = trainer.callback_metrics
        print(
            "epoch",
            trainer.current_epoch,
            "step",
            trainer.global_step,
            "train %.4f" % m["train_loss"],
            "val %.4f" % m["val_loss"],
            "lr",
            trainer.callback_metrics.get("lr-SGD", torch.tensor(-1.0)).item(),
        )


ck = ModelCheckpoint(
    dirpath="ck", monitor="val_loss", save_top_k=2, filename="e{epoch}", auto_insert_metric_name=False
)
lrm = LearningRateMonitor(logging_interval="epoch")
dl = DataLoader(TensorDataset(X, Y), batch_size=8)
t = L.Trainer(
    max_epochs=4,
    precision="bf16-mixed",
    accumulate_grad_batches=2,
    gradient_clip_val=0.5,
    callbacks=[ck, lrm, Show()],
    logger=L.pytorch.loggers.CSVLogger("logs"),
    enable_progress_bar=False,
    enable_model_summary=False,
    accelerator="cpu",
    devices=1,
)
m = M()
t.fit(m, dl, dl)
print("best", os.path.basename(ck.best_model_path), "%.4f" % ck.best_model_score)
print("kept", sorted(os.path.basename(p) for p in ck.best_k_models))
r = t.test(m, dl, ckpt_path="best", verbose=False)
print("test %.4f" % r[0]["test_loss"])
print("lr logged", sorted(k for k in t.callback_metrics if k.startswith("lr")))
