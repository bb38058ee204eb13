# library: accelerate
"""accelerate's model hooks and trackers: ModelHook subclasses with add_hook_to_module/remove_hook_from_module and SequentialHook, AlignDevicesHook with offloaded weights (attach_align_device_hook, the meta device in between calls), dispatch_model with a device map and main_device, load_checkpoint_in_model from a sharded safetensors folder (save_model with max_shard_size), get_balanced_memory, named_module_tensors, Accelerator(log_with="tensorboard") init_trackers/log/end_training read back with TensorBoard's EventAccumulator, GradientAccumulationPlugin with adjust_scheduler, DataLoaderConfiguration(split_batches=True), register_save_state_pre_hook/load_state_pre_hook, save_state(safe_serialization=False), dynamo_backend="no", release_memory, broadcast_object_list, accelerate.utils.tqdm on the main process."""

import os
import tempfile
import warnings

import torch
import torch.nn.functional as F
from accelerate import Accelerator, dispatch_model, init_empty_weights
from accelerate.hooks import (
    AlignDevicesHook,
    ModelHook,
    SequentialHook,
    add_hook_to_module,
    attach_align_device_hook,
    remove_hook_from_module,
)
from accelerate.utils import (
    DataLoaderConfiguration,
    GradientAccumulationPlugin,
    broadcast_object_list,
    get_balanced_memory,
    load_checkpoint_in_model,
    named_module_tensors,
    release_memory,
    set_seed,
    tqdm,
)
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")
torch.set_num_threads(1)
set_seed(0)


def r(x, n=5):
    return round(float(x), n)


class Scale(ModelHook):
    def __init__(self, k):
        self.k = k

    def pre_forward(self, module, *args, **kwargs):
        return tuple(a * self.k for a in args), kwargs

    def post_forward(self, module, output):
        return output + 1


lin = nn.Linear(3, 2)
x = torch.randn(4, 3)
plain = lin(x)
add_hook_to_module(lin, SequentialHook(Scale(2.0), Scale(0.5)))
hooked = lin(x)
print("hooks", torch.allclose(hooked, plain + 2), hasattr(lin, "_hf_hook"))
remove_hook_from_module(lin)
print("removed", torch.allclose(lin(x), plain), hasattr(lin, "_hf_hook"))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
        self.register_buffer("scale", torch.tensor(0.5))

    def forward(self, x):
        return self.b(torch.relu(self.a(x))) * self.scale


set_seed(0)
net = Net()
inp = torch.randn(5, 8)
ref = net(inp)
weights = {n: t.detach().clone() for n, t in net.state_dict().items()}
off = Net()
with torch.no_grad():
    for p in off.parameters():
        p.zero_()
attach_align_device_hook(off, execution_device="cpu", offload=True, weights_map=weights, offload_buffers=True)
print(
    "align offload",
    off.a.weight.device.type,
    torch.allclose(off(inp), ref, atol=1e-6),
    isinstance(off.a._hf_hook, AlignDevicesHook),
)
print("module tensors", [n for n, t in named_module_tensors(net, include_buffers=True, recurse=True)])

root = tempfile.mkdtemp()
acc = Accelerator(cpu=True)
acc.save_model(net, root, max_shard_size="1KB", safe_serialization=True)
print("shards", sorted(os.listdir(root)))
with init_empty_weights():
    empty = Net()
print("empty", empty.a.weight.device.type)
fresh = Net()
load_checkpoint_in_model(fresh, root)
print("loaded shards", torch.allclose(fresh(inp), ref))
mem = get_balanced_memory(fresh, max_memory={"cpu": 10**6}, no_split_module_classes=[])
print("balanced memory", sorted(mem))
disp = dispatch_model(fresh, device_map={"a": "cpu", "b": "cpu", "scale": "cpu"}, main_device="cpu")
print("dispatched", torch.allclose(disp(inp), ref), getattr(disp, "hf_device_map", None))

logdir = tempfile.mkdtemp()
set_seed(0)
acc = Accelerator(
    cpu=True,
    log_with="tensorboard",
    project_dir=logdir,
    gradient_accumulation_plugin=GradientAccumulationPlugin(
        num_steps=2, adjust_scheduler=True, sync_with_dataloader=True
    ),
    dataloader_config=DataLoaderConfiguration(split_batches=True),
)
acc.init_trackers("run", config={"lr": 0.1, "bs": 8})
X, Y = torch.randn(40, 8), torch.randn(40, 4)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
loader = DataLoader(TensorDataset(X, Y), batch_size=8)
saved = []
acc.register_save_state_pre_hook(lambda models, weights, out_dir: saved.append(len(models)))
acc.register_load_state_pre_hook(lambda models, in_dir: saved.append("load"))
model, opt, loader, sched = acc.prepare(model, opt, loader, sched)
step = 0
for xb, yb in tqdm(loader, main_process_only=True, disable=True):
    with acc.accumulate(model):
        loss = F.mse_loss(model(xb), yb)
        acc.backward(loss)
        opt.step()
        sched.step()
        opt.zero_grad()
    if acc.sync_gradients:
        acc.log({"loss": loss.item(), "lr": sched.get_last_lr()[0]}, step=step)
        step += 1
print("synced steps", step, "lr", sched.get_last_lr(), "loss", r(loss))
ck = os.path.join(logdir, "ck")
acc.save_state(ck, safe_serialization=False)
print("state files", sorted(os.listdir(ck)))
acc.load_state(ck)
print("state hooks", saved)
acc.end_training()
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

run_dir = os.path.join(logdir, "run")
ea = EventAccumulator(run_dir)
ea.Reload()
print("tb tags", sorted(ea.Tags()["scalars"]), [r(e.value) for e in ea.Scalars("loss")])
objs = ["a", {"b": 1}]
print("broadcast", broadcast_object_list(objs))
a, b = release_memory(torch.ones(2), torch.zeros(2))
print("released", a, b)
print("accelerate ok")
