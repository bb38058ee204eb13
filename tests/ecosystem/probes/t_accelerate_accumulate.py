# library: accelerate
"""accelerate Accelerator(gradient_accumulation_steps=2) with accumulate(), sync_gradients, clip_grad_norm_, save_state/load_state round trip."""

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader, TensorDataset

torch.set_num_threads(1)
set_seed(0)
X = torch.randn(32, 4)
Y = X @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.1
acc = Accelerator(gradient_accumulation_steps=2, cpu=True)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
opt = torch.optim.AdamW(model.parameters(), lr=0.05)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 / (1 + s))
dl = DataLoader(TensorDataset(X, Y), batch_size=4, shuffle=True)
model, opt, dl, sched = acc.prepare(model, opt, dl, sched)
for epoch in range(2):
    for i, (x, y) in enumerate(dl):
        with acc.accumulate(model):
            loss = torch.nn.functional.mse_loss(model(x), y)
            acc.backward(loss)
            if acc.sync_gradients:
                n = acc.clip_grad_norm_(model.parameters(), 1.0)
                print("epoch", epoch, "batch", i, "sync", "loss %.5f" % loss.item(), "norm %.5f" % float(n))
            opt.step()
            sched.step()
            opt.zero_grad()
print("lr %.6f" % sched.get_last_lr()[0])
acc.save_state("state")
w = [p.detach().clone() for p in model.parameters()]
with torch.no_grad():
    for p in model.parameters():
        p.add_(1.0)
acc.load_state("state")
print(
    "restored",
    all(torch.equal(a, b) for a, b in zip(w, model.parameters())),
    "lr %.6f" % sched.get_last_lr()[0],
)
print("opt state", sorted(opt.state_dict()["state"][0].keys()))
