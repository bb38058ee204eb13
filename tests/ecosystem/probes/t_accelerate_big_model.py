# library: accelerate
"""accelerate big-model utilities: init_empty_weights (meta), load_checkpoint_and_dispatch, infer_auto_device_map, compute_module_sizes, cpu_offload, disk offload, a mixed cpu/disk device map, set_module_tensor_to_device, skip_first_batches, send_to_device, find_batch_size, split_between_processes, gather_object."""

import os
import tempfile
import warnings

import torch
from accelerate import (
    Accelerator,
    PartialState,
    cpu_offload,
    disk_offload,
    dispatch_model,
    infer_auto_device_map,
    init_empty_weights,
    load_checkpoint_and_dispatch,
    skip_first_batches,
)
from accelerate.utils import (
    compute_module_sizes,
    find_batch_size,
    gather_object,
    get_max_memory,
    named_module_tensors,
    send_to_device,
    set_module_tensor_to_device,
    set_seed,
)
from safetensors.torch import save_file
from torch import nn

warnings.filterwarnings("ignore")
torch.set_num_threads(1)
set_seed(0)


def mk():
    return nn.Sequential(
        nn.Linear(8, 16), nn.ReLU(), nn.Sequential(nn.Linear(16, 16), nn.LayerNorm(16)), nn.Linear(16, 4)
    )


d = tempfile.mkdtemp()
ref = mk()
torch.save(ref.state_dict(), os.path.join(d, "w.bin"))

save_file(ref.state_dict(), os.path.join(d, "w.safetensors"))
with init_empty_weights():
    m = mk()
print("meta", m[0].weight.device, m[0].weight.shape, m[2][1].weight.is_meta)
print("sizes", sorted(compute_module_sizes(m).items())[:5])
dm = infer_auto_device_map(m, max_memory={"cpu": 100000})
print("devmap", dm)
m = load_checkpoint_and_dispatch(m, os.path.join(d, "w.safetensors"), device_map={"": "cpu"})
x = torch.randn(3, 8)
print("dispatch", torch.allclose(m(x), ref(x)), round(float(m(x).sum()), 5))
m3 = mk()
m3.load_state_dict(ref.state_dict())
m3 = cpu_offload(m3, execution_device="cpu")
print("cpu_offload", round(float(m3(x).sum()), 5), m3[0].weight.device)
m4 = mk()
m4.load_state_dict(ref.state_dict())
m4 = disk_offload(m4, os.path.join(d, "off"), execution_device="cpu")
print("disk_offload", round(float(m4(x).sum()), 5), sorted(os.listdir(os.path.join(d, "off")))[:3])
m5 = mk()
m5.load_state_dict(ref.state_dict())
m5 = dispatch_model(
    m5, device_map={"0": "cpu", "1": "cpu", "2": "disk", "3": "cpu"}, offload_dir=os.path.join(d, "off2")
)
print("mixed", round(float(m5(x).sum()), 5))
with init_empty_weights(include_buffers=True):
    bn = nn.BatchNorm1d(4)
print("buffers", bn.running_mean.device)
set_module_tensor_to_device(bn, "running_mean", "cpu", value=torch.ones(4))
print("set tensor", bn.running_mean.tolist(), [n for n, _ in named_module_tensors(bn, include_buffers=True)])
batch = {"a": torch.ones(5, 2), "b": [torch.zeros(5), (torch.ones(5, 1),)], "c": "str"}
moved = send_to_device(batch, "cpu", non_blocking=True)
print("send", type(moved["b"][1]).__name__, find_batch_size(batch))
acc = Accelerator(cpu=True)
dl = torch.utils.data.DataLoader(torch.arange(20.0), batch_size=4)
dl = acc.prepare(dl)
print("skip", [b.tolist() for b in skip_first_batches(dl, num_batches=3)])
st = PartialState()
with st.split_between_processes(["a", "b", "c"], apply_padding=True) as part:
    print("split", part)
print("gather_object", gather_object([{"r": st.process_index}]))
print("memory", sorted(get_max_memory({"cpu": 12345}).items()))
