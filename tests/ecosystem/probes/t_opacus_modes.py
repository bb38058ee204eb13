# library: opacus
"""opacus grad sample modes (hooks with the functorch fallback for a custom module, functorch, expanded weights, ghost clipping), DPLSTM/DPGRU, BatchMemoryManager virtual steps, the rdp, gdp and prv accountants and get_noise_multiplier."""

import warnings

import torch
from opacus import PrivacyEngine
from opacus.accountants import GaussianAccountant, PRVAccountant, RDPAccountant
from opacus.accountants.utils import get_noise_multiplier
from opacus.grad_sample.utils import wrap_model
from opacus.layers import DPGRU, DPLSTM
from opacus.utils.batch_memory_manager import BatchMemoryManager
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")
torch.set_num_threads(1)


def r(x):
    return round(float(x), 4)


class Custom(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 3) * 0.1)
        self.s = nn.Parameter(torch.ones(3))

    def forward(self, x):
        return torch.tanh(x @ self.w) * self.s


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = Custom()
        self.fc = nn.Linear(3, 2)
        self.ln = nn.LayerNorm(3)

    def forward(self, x):
        return self.fc(self.ln(self.c(x)))


x = torch.randn(5, 4, generator=torch.Generator().manual_seed(0))
y = torch.tensor([0, 1, 1, 0, 1])
for mode in ["hooks", "functorch", "ew"]:
    torch.manual_seed(1)
    net = Net() if mode != "ew" else nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2))
    m = wrap_model(net, grad_sample_mode=mode, batch_first=True, loss_reduction="mean")
    out = m(x)
    nn.functional.cross_entropy(out, y).backward()
    print(
        mode,
        [
            (n.split(".")[-1], tuple(p.grad_sample.shape), r(p.grad_sample.norm()))
            for n, p in m.named_parameters()
        ],
    )
torch.manual_seed(2)
lstm = DPLSTM(4, 6, num_layers=2, batch_first=True, bidirectional=True)
gru = DPGRU(4, 5, batch_first=True)
seq = torch.randn(3, 7, 4, generator=torch.Generator().manual_seed(3))
o, (h, c) = lstm(seq)
og, hg = gru(seq)
print("dplstm", o.shape, h.shape, r(o.sum()), r(c.sum()), "dpgru", og.shape, r(hg.sum()))


class Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = DPLSTM(4, 6, batch_first=True)
        self.fc = nn.Linear(6, 2)

    def forward(self, s):
        return self.fc(self.l(s)[0][:, -1])


torch.manual_seed(4)
X = torch.randn(48, 7, 4)
Y = torch.randint(0, 2, (48,))
model = Seq()
opt = torch.optim.SGD(model.parameters(), lr=0.5)
pe = PrivacyEngine()
model, opt, dl = pe.make_private(
    module=model,
    optimizer=opt,
    data_loader=DataLoader(TensorDataset(X, Y), batch_size=24),
    noise_multiplier=0.8,
    max_grad_norm=1.0,
    poisson_sampling=False,
)
torch.manual_seed(5)
with BatchMemoryManager(data_loader=dl, max_physical_batch_size=8, optimizer=opt) as mdl:
    steps = 0
    for xb, yb in mdl:
        opt.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
        steps += 1
        print("bmm", xb.shape[0], opt._is_last_step_skipped)
print("bmm steps", steps, len(pe.accountant.history), r(pe.get_epsilon(1e-5)))
torch.manual_seed(6)
m2 = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
o2 = torch.optim.SGD(m2.parameters(), lr=0.1)
pe2 = PrivacyEngine()
m2, o2, crit, dl2 = pe2.make_private(
    module=m2,
    optimizer=o2,
    criterion=nn.CrossEntropyLoss(),
    data_loader=DataLoader(TensorDataset(torch.randn(32, 4), torch.randint(0, 2, (32,))), batch_size=8),
    noise_multiplier=1.0,
    max_grad_norm=1.0,
    grad_sample_mode="ghost",
    poisson_sampling=False,
)
torch.manual_seed(7)
for xb, yb in dl2:
    o2.zero_grad()
    loss = crit(m2(xb), yb)
    loss.backward()
    o2.step()
print("ghost", type(o2).__name__, type(crit).__name__, r(sum(p.sum() for p in m2.parameters())) != 0)
acc = RDPAccountant()
for _ in range(10):
    acc.step(noise_multiplier=1.1, sample_rate=0.01)
print("rdp", r(acc.get_epsilon(1e-5)), r(acc.get_privacy_spent(delta=1e-5)[1]))
g = GaussianAccountant()
for _ in range(10):
    g.step(noise_multiplier=1.1, sample_rate=0.01)
print("gdp", r(g.get_epsilon(1e-5)))
p = PRVAccountant()
for _ in range(10):
    p.step(noise_multiplier=1.1, sample_rate=0.01)
print("prv", round(p.get_epsilon(1e-5), 2))
print(
    "sigma",
    r(
        get_noise_multiplier(
            target_epsilon=3.0, target_delta=1e-5, sample_rate=0.01, epochs=5, accountant="rdp"
        )
    ),
)
