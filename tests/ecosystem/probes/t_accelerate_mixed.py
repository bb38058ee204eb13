# library: accelerate
"""accelerate Accelerator(mixed_precision="bf16") on CPU: the prepared model's forward under autocast (bf16 outputs of linear layers), accelerator.autocast(), gather_for_metrics, unwrap_model, get_state_dict and save_model in safetensors."""

import os

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader, TensorDataset

torch.set_num_threads(1)
set_seed(0)
acc = Accelerator(mixed_precision="bf16", cpu=True)
model = torch.nn.Sequential(
    torch.nn.Linear(6, 16), torch.nn.LayerNorm(16), torch.nn.GELU(), torch.nn.Linear(16, 3)
)
opt = torch.optim.AdamW(model.parameters(), lr=0.01)
X, Y = torch.randn(24, 6), torch.randint(0, 3, (24,))
dl = DataLoader(TensorDataset(X, Y), batch_size=8)
model, opt, dl = acc.prepare(model, opt, dl)
for epoch in range(2):
    for x, y in dl:
        out = model(x)
        loss = torch.nn.functional.cross_entropy(out.float(), y)
        acc.backward(loss)
        opt.step()
        opt.zero_grad()
    print("epoch", epoch, out.dtype, "loss %.4f" % loss.item())
with acc.autocast():
    h = acc.unwrap_model(model)[0](X[:2])
print("autocast", h.dtype)
preds = acc.gather_for_metrics(model(X).argmax(-1))
print("preds", preds.tolist())
sd = acc.get_state_dict(model)
print("state", sorted(sd.keys()), sd["0.weight"].dtype)
acc.save_model(model, "saved")
print("files", sorted(os.listdir("saved")))
