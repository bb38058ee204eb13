# library: lightning
"""bfloat16 training in Lightning (precision="bf16-mixed") and Fabric (bf16-true, init_module, SGD on bfloat16 parameters) of a conv/LayerNorm/MultiheadAttention/Dropout model, with a OneCycleLR step schedule, value clipping and LearningRateMonitor; torch.autocast on its own. Covers dropout of bfloat16 activations, the 16-bit layer-norm backward, and attention without weights through the CPU flash kernel (forward and backward)."""

import warnings

import lightning as L
import torch
import torch.nn.functional as F
from lightning.pytorch.callbacks import LearningRateMonitor
from lightning.pytorch.loggers import CSVLogger
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")
torch.set_num_threads(1)


def f(x):
    return f"{float(x):.5f}"


def name(dtype):
    return str(dtype).rsplit(".", 1)[-1]


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, 3, padding=1)
        self.ln = nn.LayerNorm(8)
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True, dropout=0.1)
        self.ff = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Dropout(0.1), nn.Linear(16, 3))

    def forward(self, x):
        h = self.ln(self.conv(x).transpose(1, 2))
        a, _ = self.attn(h, h, h, need_weights=False)
        return self.ff(h + a).mean(1)


g = torch.Generator().manual_seed(0)
X = torch.randn(48, 4, 6, generator=g)
Y = torch.randint(0, 3, (48,), generator=g)

torch.manual_seed(0)
m = Block()
with torch.autocast("cpu", dtype=torch.bfloat16):
    out = m(X[:8])
    loss = F.cross_entropy(out, Y[:8])
print("autocast", name(out.dtype), name(loss.dtype), f(loss), f(out.float().sum()))
loss.backward()
print(
    "grads",
    name(m.conv.weight.grad.dtype),
    f(m.conv.weight.grad.abs().sum()),
    f(m.attn.in_proj_weight.grad.abs().sum()),
)


class Lit(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.m = Block()

    def training_step(self, b, i):
        loss = F.cross_entropy(self.m(b[0]), b[1])
        self.log("loss", loss, on_step=False, on_epoch=True)
        return loss

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=3e-3)
        s = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=6)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": s, "interval": "step"}}


for prec in ("bf16-mixed",):  # (bf16-true with AdamW: a rare one-ulp difference grows step by step)
    L.seed_everything(0, verbose=False)
    lit = Lit()
    lrm = LearningRateMonitor(logging_interval="step")
    t = L.Trainer(
        accelerator="cpu",
        max_epochs=2,
        precision=prec,
        logger=CSVLogger("logs"),
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        gradient_clip_val=0.5,
        gradient_clip_algorithm="value",
        callbacks=[lrm],
    )
    dl = DataLoader(
        TensorDataset(X, Y), batch_size=16, shuffle=True, generator=torch.Generator().manual_seed(1)
    )
    t.fit(lit, dl)
    w = lit.m.conv.weight
    print(
        prec,
        t.global_step,
        f(t.callback_metrics["loss"]),
        name(w.dtype),
        f(w.float().sum()),
        f(t.optimizers[0].param_groups[0]["lr"]),
    )
    lit.eval()
    with torch.no_grad():
        p = lit.m(X[:4].to(w.dtype))
    print(prec, "eval", f(p.float().sum()))

L.seed_everything(0, verbose=False)
fab = L.Fabric(accelerator="cpu", devices=1, precision="bf16-true")
with fab.init_module():
    net = Block()
print("init_module", name(net.conv.weight.dtype))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
net, opt = fab.setup(net, opt)
for i in range(3):
    loss = F.cross_entropy(net(X[i * 16 : (i + 1) * 16]), Y[i * 16 : (i + 1) * 16])
    fab.backward(loss)
    opt.step()
    opt.zero_grad()
    print("fabric bf16-true", i, f(loss), name(loss.dtype))
print("lightning", L.__version__, "ok")
