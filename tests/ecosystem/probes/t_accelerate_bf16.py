# library: accelerate
"""accelerate on one CPU process: Accelerator(mixed_precision="bf16", gradient_accumulation_steps=2) training (prepare of model/optimizer/loader/scheduler, accumulate, clip_grad_norm_), accelerator.autocast, clip_grad_value_ (after zero_grad, with no gradient, PyTorch raises: disttorch ran on silently before the fix), unwrap_model and get_state_dict, gather_for_metrics, skip_first_batches, find_executable_batch_size retrying after an out-of-memory error."""

import warnings

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import find_executable_batch_size, set_seed
from torch.utils.data import DataLoader, TensorDataset

torch.set_num_threads(1)
warnings.filterwarnings("ignore")


def r(t, n=4):
    return [round(v, 4) for v in torch.as_tensor(t).detach().float().flatten().tolist()[:n]]


set_seed(0)
X = torch.randn(40, 6)
Y = (X[:, 0] > 0).long()
ds = TensorDataset(X, Y)


def make():
    set_seed(1)
    return torch.nn.Sequential(
        torch.nn.Linear(6, 16), torch.nn.LayerNorm(16), torch.nn.GELU(), torch.nn.Linear(16, 2)
    )


acc = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=2)
print("state", acc.mixed_precision, acc.num_processes, acc.device, acc.distributed_type)
model = make()
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=1.0, end_factor=0.1, total_iters=10)
loader = DataLoader(ds, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(0))
model, opt, loader, sched = acc.prepare(model, opt, loader, sched)
for epoch in range(2):
    for xb, yb in loader:
        with acc.accumulate(model):
            out = model(xb)
            loss = F.cross_entropy(out, yb)
            acc.backward(loss)
            if acc.sync_gradients:
                norm = acc.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
            sched.step()
            opt.zero_grad()
    print(
        "epoch",
        epoch,
        "out dtype",
        out.dtype,
        "loss",
        round(loss.item(), 3),
        "norm",
        round(float(norm), 3),
        "lr",
        r(sched.get_last_lr()),
    )
with acc.autocast():
    h = model(X[:3])
    mm = X[:3] @ X[:3].T
print("autocast", h.dtype, mm.dtype, r(h))
try:  # after zero_grad no parameter has a gradient: PyTorch refuses
    acc.clip_grad_value_(model.parameters(), 0.1)
except RuntimeError as e:
    print("clip value without grads", type(e).__name__)
acc.backward(F.cross_entropy(model(X[:8]), Y[:8]))
acc.clip_grad_value_(model.parameters(), 0.01)
print("clipped values", max(p.grad.abs().max().item() for p in model.parameters()) <= 0.01)
opt.zero_grad()
raw = acc.unwrap_model(model)
print("unwrap", type(raw).__name__, raw[0].weight.dtype, sorted(acc.get_state_dict(model))[:3])

# gather_for_metrics over an eval loader (no padding duplicates on one process)
ev = acc.prepare(DataLoader(TensorDataset(X[:13], Y[:13]), batch_size=4))
preds, labels = [], []
model.eval()
with torch.no_grad():
    for xb, yb in ev:
        p, lab = acc.gather_for_metrics((model(xb).argmax(-1), yb))
        preds.append(p)
        labels.append(lab)
print(
    "gathered",
    torch.cat(preds).shape[0],
    round((torch.cat(preds) == torch.cat(labels)).float().mean().item(), 4),
)

# skip_first_batches
plain = acc.prepare(DataLoader(ds, batch_size=5))
skipped = acc.skip_first_batches(plain, num_batches=6)
print("skip", len(plain), len(skipped), [b[0].shape[0] for b in skipped], r(next(iter(skipped))[0][0]))

# find_executable_batch_size
tried = []


@find_executable_batch_size(starting_batch_size=64)
def train(batch_size):
    tried.append(batch_size)
    if batch_size > 16:
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
    dl = DataLoader(ds, batch_size=batch_size)
    m = make()
    o = torch.optim.SGD(m.parameters(), lr=0.1)
    for xb, yb in dl:
        o.zero_grad()
        loss = F.cross_entropy(m(xb), yb)
        loss.backward()
        o.step()
    return batch_size, round(loss.item(), 4)


print("find batch", train(), tried)
acc.end_training()
