# library: opacus
"""Opacus's grad_sample_mode="ew" (PyTorch's expanded weights, nn.utils._per_sample_grad) on a conv/group-norm model: two DP-SGD epochs, epsilon."""

import warnings

import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")
torch.set_num_threads(1)


def f(x):
    return f"{float(x):.5f}"


torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Conv2d(1, 4, 3),
    torch.nn.GroupNorm(2, 4),
    torch.nn.ReLU(),
    torch.nn.Flatten(),
    torch.nn.Linear(4 * 6 * 6, 3),
)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
dl = DataLoader(TensorDataset(torch.randn(32, 1, 8, 8), torch.randint(0, 3, (32,))), batch_size=8)
pe = PrivacyEngine()
model, opt, dl = pe.make_private(
    module=model,
    optimizer=opt,
    data_loader=dl,
    noise_multiplier=0.8,
    max_grad_norm=1.0,
    grad_sample_mode="ew",
    poisson_sampling=False,
)
print(type(model).__name__)
for ep in range(2):
    for xb, yb in dl:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
    print("epoch", ep, f(loss), f(pe.get_epsilon(1e-5)))
print("w", f(model._module[0].weight.sum()))
print("opacus ok")
