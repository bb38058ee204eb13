# library: accelerate
"""accelerate on one CPU process: set_seed(deterministic=True), ProjectConfiguration with automatic_checkpoint_naming and total_limit, register_for_checkpointing of a custom object, save_state/load_state then the same next steps, accumulate() over two models, no_sync, gather_for_metrics of dicts with a short last batch, accelerator.save/load, LocalSGD, on_main_process/main_process_first, reduce, pad_across_processes, get_state_dict, free_memory, trigger_sync_in_backward, skip_first_batches, autocast(bf16) context, send_to_device of nested structures."""

import os
import warnings

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.local_sgd import LocalSGD
from accelerate.utils import ProjectConfiguration, send_to_device, set_seed
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")
torch.set_num_threads(1)
set_seed(0, deterministic=True)


class Counter:
    def __init__(self):
        self.n = 0

    def state_dict(self):
        return {"n": self.n}

    def load_state_dict(self, sd):
        self.n = sd["n"]


x = torch.randn(50, 4)
y = x @ torch.tensor([[1.0], [-1.0], [0.5], [2.0]]) + 0.1
pc = ProjectConfiguration(project_dir="proj", automatic_checkpoint_naming=True, total_limit=2)
acc = Accelerator(cpu=True, gradient_accumulation_steps=2, project_config=pc)
enc, head = torch.nn.Linear(4, 6), torch.nn.Linear(6, 1)
opt = torch.optim.SGD(list(enc.parameters()) + list(head.parameters()), lr=0.05, momentum=0.9)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 / (1 + s))
dl = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True)
edl = DataLoader(TensorDataset(x, y), batch_size=16)
enc, head, opt, sched, dl, edl = acc.prepare(enc, head, opt, sched, dl, edl)
cnt = Counter()
acc.register_for_checkpointing(cnt)
for i, (bx, by) in enumerate(dl):
    with acc.accumulate(enc, head):
        loss = F.mse_loss(head(torch.tanh(enc(bx))), by)
        acc.backward(loss)
        if acc.sync_gradients:
            acc.clip_grad_norm_(list(enc.parameters()) + list(head.parameters()), 1.0)
            cnt.n += 1
        opt.step()
        sched.step()
        opt.zero_grad()
    print(f"step {i} loss {loss.item():.5f} sync {acc.sync_gradients} lr {sched.get_last_lr()[0]:.5f}")
for _ in range(3):
    acc.save_state()
print("checkpoints", sorted(os.listdir("proj/checkpoints")), "counter", cnt.n)
print("files", sorted(os.listdir("proj/checkpoints/checkpoint_2")))


def next_steps():
    out = []
    set_seed(5)
    for bx, by in acc.skip_first_batches(dl, 2):
        loss = F.mse_loss(head(torch.tanh(enc(bx))), by)
        acc.backward(loss)
        opt.step()
        sched.step()
        opt.zero_grad()
        out.append(round(loss.item(), 5))
    return out


a = next_steps()
cnt.n = 99
acc.load_state("proj/checkpoints/checkpoint_2")
b = next_steps()
print("after load", cnt.n, a == b, a)

enc.eval()
head.eval()
preds = []
for bx, by in edl:
    with torch.no_grad():
        out = {"p": head(torch.tanh(enc(bx))), "y": by}
    g = acc.gather_for_metrics(out)
    preds.append(g["p"].shape[0])
print(
    "gathered",
    preds,
    f"{acc.reduce(torch.tensor(3.0), 'sum').item():.5f}",
    tuple(acc.pad_across_processes(torch.ones(2, 3), dim=1).shape),
)
sd = acc.get_state_dict(enc)
print("state dict", sorted(sd.keys()), type(acc.unwrap_model(head)).__name__)
acc.save({"enc": sd, "step": 3}, "manual.pt")
ld = acc.load("manual.pt") if hasattr(acc, "load") else torch.load("manual.pt")
print("saved", sorted(ld.keys()), ld["step"])
with acc.no_sync(enc):
    l2 = enc(x[:2]).sum()
    acc.backward(l2)
print("no_sync grad", f"{enc.weight.grad.abs().sum().item():.5f}")
with acc.main_process_first():
    print("main first", acc.is_main_process, acc.is_local_main_process, acc.num_processes, acc.process_index)


@acc.on_main_process
def only_main(v):
    print("on main", v)


only_main(7)
nested = send_to_device({"a": [torch.ones(2), (torch.zeros(1), "s")], "b": 3}, acc.device)
print("send_to_device", type(nested["a"][1]).__name__, nested["a"][1][1], str(nested["a"][0].device))
with acc.autocast():
    z = enc(x[:3])
print("autocast dtype", str(z.dtype).rsplit(".", 1)[-1])

model = torch.nn.Linear(4, 1)
o2 = torch.optim.SGD(model.parameters(), lr=0.1)
model, o2 = acc.prepare(model, o2)
with LocalSGD(accelerator=acc, model=model, local_sgd_steps=2, enabled=True) as ls:
    for bx, by in DataLoader(TensorDataset(x, y), batch_size=10):
        loss = F.mse_loss(model(bx), by)
        acc.backward(loss)
        o2.step()
        o2.zero_grad()
        ls.step()
print(f"localsgd {loss.item():.5f}")
acc.free_memory()
print("accelerate ok")
