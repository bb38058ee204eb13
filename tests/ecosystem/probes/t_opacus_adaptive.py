# library: opacus
"""opacus beyond the defaults: per-layer and adaptive clipping (AdaClipDPOptimizer draws its noise with torch.normal(0, <0-dim tensor std>, size=...): failed before the fix) of a DPMultiheadAttention/EmbeddingBag model with Poisson sampling off, a Conv3d model through PrivacyEngine save_checkpoint/load_checkpoint, noise from a seeded generator."""

import warnings

import torch
import torch.nn as nn
from opacus import PrivacyEngine
from opacus.layers import DPMultiheadAttention
from torch.utils.data import DataLoader, TensorDataset

torch.set_num_threads(1)
warnings.filterwarnings("ignore")
torch.manual_seed(0)


def r(t, n=4):
    return [round(v, 5) for v in t.detach().flatten().tolist()[:n]]


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.EmbeddingBag(30, 8, mode="mean")
        self.tok = nn.Embedding(30, 8)
        self.mha = DPMultiheadAttention(8, 2, batch_first=True)
        self.fc = nn.Linear(16, 2)

    def forward(self, x):
        bag = self.emb(x.flatten(), torch.arange(0, x.numel(), x.shape[1]))
        h = self.tok(x)
        a, _ = self.mha(h, h, h)
        return self.fc(torch.cat([bag, a.mean(1)], -1))


class Vol(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv3d(1, 2, 2)
        self.fc = nn.Linear(2 * 3 * 3 * 3, 2)

    def forward(self, x):
        return self.fc(self.c(x).relu().flatten(1))


X = torch.randint(0, 30, (40, 6))
Y = (X[:, 0] % 2).long()
for clipping, extra in [
    ("per_layer", {}),
    (
        "adaptive",
        dict(
            target_unclipped_quantile=0.5,
            clipbound_learning_rate=0.2,
            max_clipbound=10.0,
            min_clipbound=0.1,
            unclipped_num_std=1.0,
        ),
    ),
]:
    torch.manual_seed(1)
    model = Attn()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    dl = DataLoader(TensorDataset(X, Y), batch_size=10)
    pe = PrivacyEngine(accountant="rdp")
    n_params = len(list(model.parameters()))
    mgn = [1.0] * n_params if clipping == "per_layer" else 1.0
    model, opt, dl = pe.make_private(
        module=model,
        optimizer=opt,
        data_loader=dl,
        noise_multiplier=0.5,
        max_grad_norm=mgn,
        clipping=clipping,
        poisson_sampling=False,
        **extra,
    )
    for xb, yb in dl:
        opt.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
    print(
        clipping,
        type(opt).__name__,
        type(dl.batch_sampler).__name__ if dl.batch_sampler is not None else None,
        "eps",
        round(pe.get_epsilon(1e-5), 3),
    )
    if clipping == "adaptive":
        print("  clipbound", round(float(opt.max_grad_norm), 4) > 0)

# checkpoint round trip
torch.manual_seed(2)
model = Vol()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
dl = DataLoader(TensorDataset(torch.randn(16, 1, 4, 4, 4), torch.randint(0, 2, (16,))), batch_size=8)
pe = PrivacyEngine(accountant="rdp")
model, opt, dl = pe.make_private(
    module=model, optimizer=opt, data_loader=dl, noise_multiplier=1.0, max_grad_norm=1.0
)
for xb, yb in dl:
    opt.zero_grad()
    nn.functional.cross_entropy(model(xb), yb).backward()
    opt.step()
pe.save_checkpoint(path="dp.ckpt", module=model, optimizer=opt)
pe2 = PrivacyEngine(accountant="rdp")
v2 = Vol()
model2, opt2, _ = pe2.make_private(
    module=v2,
    optimizer=torch.optim.Adam(v2.parameters(), lr=1e-2),
    data_loader=dl,
    noise_multiplier=1.0,
    max_grad_norm=1.0,
)
meta = pe2.load_checkpoint(path="dp.ckpt", module=model2, optimizer=opt2)
print(
    "checkpoint",
    all(torch.equal(a, b) for a, b in zip(model.parameters(), model2.parameters())),
    pe2.accountant.history == pe.accountant.history,
    sorted(meta),
)

# seeded noise
outs = []
for _ in range(2):
    torch.manual_seed(0)
    m = nn.Linear(3, 1)
    o = torch.optim.SGD(m.parameters(), lr=1.0)
    gen = torch.Generator().manual_seed(7)
    pe = PrivacyEngine(accountant="rdp")
    m, o, d = pe.make_private(
        module=m,
        optimizer=o,
        data_loader=DataLoader(TensorDataset(torch.ones(4, 3), torch.ones(4, 1)), batch_size=4),
        noise_multiplier=1.0,
        max_grad_norm=1.0,
        noise_generator=gen,
        poisson_sampling=False,
    )
    for xb, yb in d:
        o.zero_grad()
        nn.functional.mse_loss(m(xb), yb).backward()
        o.step()
    outs.append(r(m._module.weight))
print("seeded noise", outs[0] == outs[1], outs[0])
