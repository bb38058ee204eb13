# library: lightning
"""Lightning precision="bf16-mixed" training of Linear -> LayerNorm blocks (under CPU autocast the LayerNorm takes the bfloat16 Linear output with its float32 weight and bias: PyTorch's kernel sums their gradients row by row in a bfloat16 buffer; disttorch summed them in float32 before the fix), with the LayerNorm gradients, losses and weights after a few steps; the same through Fabric."""

import warnings

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")
torch.set_num_threads(1)
L.seed_everything(0, verbose=False)


def net():
    return nn.Sequential(
        nn.Linear(12, 32), nn.LayerNorm(32), nn.GELU(), nn.Linear(32, 32), nn.LayerNorm(32), nn.Linear(32, 3)
    )


class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = net()
        self.grads = []

    def training_step(self, batch, i):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("loss", loss)
        return loss

    def on_before_optimizer_step(self, optimizer):
        ln = self.net[1]
        self.grads.append([round(v, 6) for v in (ln.weight.grad[:4].tolist() + ln.bias.grad[:4].tolist())])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


X = torch.randn(96, 12)
Y = (X[:, 0] > 0).long() + (X[:, 1] > 0).long()
m = M()
tr = L.Trainer(
    max_epochs=1,
    precision="bf16-mixed",
    logger=False,
    enable_progress_bar=False,
    enable_checkpointing=False,
    enable_model_summary=False,
)
tr.fit(m, DataLoader(TensorDataset(X, Y), batch_size=32))
for i, g in enumerate(m.grads):
    print("ln grads", i, g)
print("loss", round(float(tr.callback_metrics["loss"]), 5))
print(
    "weights",
    [round(v, 6) for v in m.net[4].weight[:6].tolist()],
    [round(v, 6) for v in m.net[5].weight[0, :4].tolist()],
)

fab = L.Fabric(accelerator="cpu", devices=1, precision="bf16-mixed")
fab.seed_everything(1)
model = net()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
model, opt = fab.setup(model, opt)
for step in range(4):
    loss = nn.functional.cross_entropy(model(X[:48]), Y[:48])
    fab.backward(loss)
    ln = model.module[4] if hasattr(model, "module") else model[4]
    print("fabric", step, round(loss.item(), 5), [round(v, 6) for v in ln.bias.grad[:4].tolist()])
    opt.step()
    opt.zero_grad()
print("lightning", L.__version__, "ok")
