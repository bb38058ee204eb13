# library: einops
"""torch.export.export of a module whose forward prints (PyTorch runs it once, in the trace: before the fix, twice) and rearranges with einops; torch.ops.aten operators called before anything loads them (_grouped_mm, conv2d, _softmax, gelu: before the fix, _grouped_mm raised NotImplementedError)."""

import torch
from einops import rearrange
from einops.layers.torch import Rearrange

torch.manual_seed(0)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 16)
        self.split = Rearrange("b t (h d) -> b h t d", h=2)

    def forward(self, x):
        print("forward runs, shape", tuple(x.shape))
        h = self.split(self.proj(x))
        return rearrange(h.softmax(-1), "b h t d -> b t (h d)").sum(-1)


net = Net().eval()
x = torch.randn(2, 5, 8)
ep = torch.export.export(net, (x,))
print("exported", tuple(ep.graph_signature.user_inputs))
with torch.no_grad():
    print("same", torch.allclose(ep.module()(x), net(x)))
aten = torch.ops.aten
a, b = torch.randn(6, 8), torch.randn(2, 8, 4)
print("grouped_mm", tuple(aten._grouped_mm(a, b, offs=torch.tensor([2, 6], dtype=torch.int32)).shape))
print("conv2d", aten.conv2d.default(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2)).flatten().tolist())
print("softmax %.5f" % aten._softmax.default(torch.tensor([[1.0, 2.0, 3.0]]), 1, False)[0, 2].item())
print("gelu %.5f" % aten.gelu.default(torch.tensor([0.5])).item())
