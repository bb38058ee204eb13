# library: opacus
"""opacus PrivacyEngine.make_private_with_epsilon (noise multiplier found for a target epsilon), training with Poisson sampling, get_epsilon."""

import warnings

import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")
torch.manual_seed(0)
torch.set_num_threads(1)
X, Y = torch.randn(64, 6), torch.randint(0, 2, (64,))
model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
pe = PrivacyEngine(accountant="rdp")
model, opt, dl = pe.make_private_with_epsilon(
    module=model,
    optimizer=opt,
    data_loader=DataLoader(TensorDataset(X, Y), batch_size=16),
    target_epsilon=3.0,
    target_delta=1e-5,
    epochs=2,
    max_grad_norm=1.0,
)
print("noise %.4f" % opt.noise_multiplier, type(dl.batch_sampler).__name__)
for epoch in range(2):
    for x, y in dl:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    print("epoch", epoch, "eps %.4f" % pe.get_epsilon(1e-5))
