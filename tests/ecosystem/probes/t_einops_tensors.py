# library: einops
"""einops.layers.torch (Rearrange, Reduce, EinMix with weight/bias shapes and group axes) in an nn.Sequential trained 3 steps, scripted-style use in state_dict; pack/unpack with several wildcards and gradients; einops.einsum/repeat/reduce on int and bool tensors; einx (rearrange, dot, reduce, get_at, softmax, vmap-free elementwise) on torch tensors; safetensors save_model/load_model (shared weights, strict=False), safe_open(framework="pt") get_slice with steps and negative indices, metadata; datasets with_format("torch") into a DataLoader with a collate of mixed columns."""

import datasets
import einops
import einx
import torch
import torch.nn.functional as F
from einops import pack, rearrange, reduce, repeat, unpack
from einops.layers.torch import EinMix, Rearrange, Reduce
from safetensors import safe_open
from safetensors.torch import load_file, load_model, save_file, save_model
from torch import nn
from torch.utils.data import DataLoader

torch.set_num_threads(1)
torch.manual_seed(0)


def r(t, n=5):
    return [round(v, n) for v in t.flatten().tolist()]


net = nn.Sequential(
    Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
    EinMix("b t c -> b t d", weight_shape="c d", bias_shape="d", c=12, d=8),
    nn.GELU(),
    EinMix("b (t) d -> b u d", weight_shape="t u", bias_shape="u", t=16, u=4),
    EinMix("b u (g d) -> b u (g e)", weight_shape="g d e", g=2, d=4, e=3),
    Reduce("b u e -> b e", "max"),
    nn.Linear(6, 3),
)
x = torch.randn(5, 3, 8, 8)
y = torch.tensor([0, 1, 2, 1, 0])
print("einmix params", sorted((k, tuple(v.shape)) for k, v in net.state_dict().items()))
print("einmix repr", repr(net[1]), repr(net[5]))
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(3):
    loss = F.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"einops step {step} loss {loss.item():.5f}")

a, b, c = (
    torch.randn(2, 3, 4, requires_grad=True),
    torch.randn(2, 3, requires_grad=True),
    torch.randn(2, 3, 5, 2),
)
packed, ps = pack([a, b, c], "i j *")
print("pack", tuple(packed.shape), [tuple(s) for s in ps])
ua, ub, uc = unpack(packed * 2, ps, "i j *")
(ua.sum() + ub.pow(2).sum() + uc.mean()).backward()
print("unpack", tuple(ua.shape), tuple(ub.shape), tuple(uc.shape), r(a.grad[0, 0]), r(b.grad[0]))
p2, ps2 = pack([torch.ones(3), torch.zeros(2, 3), torch.full((4, 5, 3), 2.0)], "* c")
print("pack star first", tuple(p2.shape), [tuple(s) for s in ps2], r(p2.sum(0)))
print("unpack -1", [tuple(t.shape) for t in unpack(torch.randn(2, 13), [(3,), (-1,)], "b *")])
ints = torch.arange(24).reshape(2, 3, 4)
print("int reduce", reduce(ints, "a b c -> a", "sum").tolist(), reduce(ints, "a b c -> c b", "max").tolist())
print("bool reduce", reduce(ints > 10, "a b c -> a b", "any").tolist())
print(
    "repeat",
    tuple(repeat(ints, "a b c -> (r a) b c k", r=2, k=3).shape),
    rearrange(ints, "a b c -> (c b) a")[:3].tolist(),
)
print("einsum", r(einops.einsum(a.detach(), c[..., 0], "i j k, i j l -> k l")[:2]))

t1, t2 = torch.randn(2, 4, 3), torch.randn(3, 5)
print("einx dot", r(einx.dot("b n [c], [c] d -> b n d", t1, t2)[0, 0]))
print(
    "einx rearrange",
    tuple(einx.rearrange("b n c -> b c n", t1).shape),
    tuple(einx.rearrange("b n c, d -> b n (c + d)", t1, torch.zeros(2)).shape),
)
print("einx sum", r(einx.sum("b [n] c", t1)[0]), r(einx.mean("b n [c]", t1)[1]))
print("einx softmax", r(einx.softmax("b n [c]", t1)[0, 0]))
print("einx get_at", r(einx.get_at("b [n] c, b -> b c", t1, torch.tensor([1, 3]))))
print("einx add", r(einx.add("b n c, c", t1, torch.tensor([1.0, 2.0, 3.0]))[0, 0]))


# safetensors
class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.head = nn.Linear(4, 10, bias=False)
        self.head.weight = self.emb.weight
        self.norm = nn.LayerNorm(4)
        self.register_buffer("pos", torch.arange(6, dtype=torch.float32))


m = Tied()
save_model(m, "tied.safetensors", metadata={"format": "pt", "note": "tied"})
m2 = Tied()
missing, unexpected = load_model(m2, "tied.safetensors")
print(
    "load_model",
    sorted(missing),
    sorted(unexpected),
    bool(torch.equal(m2.head.weight, m.emb.weight)),
    m2.head.weight is m2.emb.weight,
)
print("file keys", sorted(load_file("tied.safetensors").keys()))
save_file(
    {
        "w": torch.arange(60, dtype=torch.float32).reshape(6, 10),
        "i": torch.arange(5, dtype=torch.int32),
        "h": torch.randn(3, 3).half(),
    },
    "sl.safetensors",
    metadata={"k": "v"},
)
with safe_open("sl.safetensors", framework="pt") as f:
    print("meta", f.metadata(), sorted(f.keys()))
    sl = f.get_slice("w")
    print("slice", sl.get_shape(), sl.get_dtype(), sl[1:3].tolist(), sl[:, 2:4][-2:].tolist())
    print("slice step", sl[::2, -3:].tolist(), sl[4].tolist()[:3], f.get_slice("i")[1:].tolist())
    h = f.get_tensor("h")
    print("half", str(h.dtype).rsplit(".", 1)[-1], tuple(h.shape))
extra = nn.Sequential(nn.Linear(2, 2))
try:
    load_model(extra, "tied.safetensors")
except RuntimeError as e:
    print("strict error", type(e).__name__)
mi, un = load_model(extra, "tied.safetensors", strict=False)
print("non-strict", sorted(mi), sorted(un))

# datasets into a DataLoader
ds = datasets.Dataset.from_dict(
    {
        "x": [[float(i), float(i) / 2] for i in range(10)],
        "y": list(range(10)),
        "name": [f"n{i}" for i in range(10)],
        "flag": [i % 2 == 0 for i in range(10)],
    }
)
tds = ds.with_format("torch", columns=["x", "y", "flag"], output_all_columns=True)
row = tds[0]
print(
    "row",
    sorted(row.keys()),
    str(row["x"].dtype).rsplit(".", 1)[-1],
    str(row["y"].dtype).rsplit(".", 1)[-1],
    str(row["flag"].dtype).rsplit(".", 1)[-1],
    row["name"],
)
dl = DataLoader(tds, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(0))
for bt in dl:
    print("batch", tuple(bt["x"].shape), bt["y"].tolist(), bt["flag"].tolist(), bt["name"])
lin = nn.Linear(2, 1)
o = torch.optim.SGD(lin.parameters(), lr=0.01)
for bt in DataLoader(ds.with_format("torch", columns=["x", "y"]), batch_size=5):
    loss = F.mse_loss(lin(bt["x"]).squeeze(1), bt["y"].float())
    o.zero_grad()
    loss.backward()
    o.step()
    print(f"ds loss {loss.item():.5f}")
print("einops", einops.__version__, "ok")
