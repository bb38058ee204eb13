# library: tensorboard
"""TensorBoard add_graph of models with constants, buffers, two inputs and an LSTM (the graph and its step1 run metadata: the run metadata was missing before the fix); histograms of parameters, integers and float16 with bin choices, hparams with a tensor metric, a mesh, image batches, bfloat16 and new-style scalars, an embedding with a metadata header; all read back with EventAccumulator."""

import os
import warnings

import tensorboard
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from torch import nn
from torch.utils.tensorboard import SummaryWriter

warnings.filterwarnings("ignore")
torch.manual_seed(0)
torch.set_num_threads(1)


class WithConst(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.register_buffer("scale", torch.tensor([2.0, 0.5, 1.0]))

    def forward(self, x):
        y = self.fc(x) * self.scale + 1.5
        y = y - torch.tensor(0.25)
        return torch.cat([y, torch.zeros(x.shape[0], 1)], dim=1).clamp(min=-1.0)


class TwoIn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=1)
        self.bn = nn.BatchNorm2d(2)
        self.lin = nn.Linear(2 * 4 * 4 + 3, 2)

    def forward(self, img, vec):
        h = torch.relu(self.bn(self.conv(img))).flatten(1)
        return self.lin(torch.cat([h, vec], 1)).softmax(-1)


class Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.lstm = nn.LSTM(4, 5, batch_first=True)
        self.head = nn.Linear(5, 2)

    def forward(self, ids):
        out, (h, c) = self.lstm(self.emb(ids))
        return self.head(out[:, -1])


w = SummaryWriter("runs/a")
for name, model, args in [
    ("const", WithConst(), torch.randn(2, 4)),
    ("twoin", TwoIn().eval(), (torch.randn(2, 1, 4, 4), torch.randn(2, 3))),
    ("seq", Seq(), torch.randint(0, 10, (2, 5))),
]:
    try:
        w.add_graph(model, args)
        print("add_graph", name, "ok")
    except Exception as e:
        print("add_graph", name, "FAILS", type(e).__name__, str(e)[:200])
m = TwoIn()
for step in range(3):
    for n, p in m.named_parameters():
        w.add_histogram(n, p.detach() + step, step)
    w.add_histogram("ints", torch.arange(10) * (step + 1), step, bins="auto")
    w.add_histogram("half", torch.linspace(-1, 1, 50).half(), step, bins=5)
w.add_hparams(
    {"lr": 0.1, "bs": 16, "opt": "sgd", "flag": True},
    {"hparam/acc": 0.75, "hparam/loss": torch.tensor(0.3)},
    run_name="hp",
)
verts = torch.tensor([[[1.0, 1, 1], [-1, -1, 1], [1, -1, -1], [-1, 1, -1]]])
faces = torch.tensor([[[0, 2, 3], [0, 3, 1], [0, 1, 2], [1, 3, 2]]], dtype=torch.int32)
colors = torch.tensor([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 0, 255]]], dtype=torch.uint8)
w.add_mesh("mesh", vertices=verts, faces=faces, colors=colors, global_step=0)
w.add_images("batch", torch.rand(4, 3, 8, 8), 0)
w.add_image("hwc", torch.rand(8, 8, 3), 0, dataformats="HWC")
w.add_text("md", "**bold** text", 0)
w.add_scalar("bf16", torch.tensor(1.5, dtype=torch.bfloat16), 0)
w.add_scalar("x", torch.tensor(2.0, requires_grad=True), 1, new_style=True)
w.add_embedding(
    torch.randn(6, 4),
    metadata=[["a", "1"], ["b", "2"], ["c", "3"], ["d", "4"], ["e", "5"], ["f", "6"]],
    metadata_header=["l", "n"],
    tag="emb",
)
w.flush()
w.close()
ea = EventAccumulator("runs/a", size_guidance={"histograms": 0, "tensors": 0})
ea.Reload()
tags = ea.Tags()
print(
    "tags", {k: sorted(v) if isinstance(v, list) else v for k, v in sorted(tags.items()) if k != "meta_graph"}
)
for t in sorted(tags["histograms"]):
    h = ea.Histograms(t)
    print(
        "hist",
        t,
        [
            (
                e.step,
                round(e.histogram_value.min, 4),
                round(e.histogram_value.max, 4),
                round(e.histogram_value.sum, 4),
                e.histogram_value.num,
                len(e.histogram_value.bucket),
            )
            for e in h
        ],
    )
print("graph inputs", sorted(n.name for n in ea.Graph().node if n.op == "IO Node"))
rm = ea.RunMetadata("step1")
print("run metadata", [d.device for d in rm.step_stats.dev_stats], len(rm.step_stats.dev_stats[0].node_stats))
for t in sorted(tags["tensors"]):
    print("tensor", t, [e.step for e in ea.Tensors(t)])
print("scalars", [(t, [round(e.value, 4) for e in ea.Scalars(t)]) for t in sorted(tags["scalars"])])
print("hp dir", sorted(os.listdir("runs/a")) != [])
print("tensorboard", tensorboard.__version__, "ok")
