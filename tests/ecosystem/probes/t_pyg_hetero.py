# library: torch_geometric
"""PyG heterogeneous graphs: HeteroData, ToUndirected, to_hetero of a GraphSAGE model (PyG's own torch.fx Tracer.trace over torch.fx's patching helpers, graph surgery with inserting_after called without `with`, lazy Linear layers deep-copied per edge type), a few training steps, to_hetero_with_bases, HGTConv, negative_sampling."""

import torch
import torch.nn.functional as F
import torch_geometric
import torch_geometric.transforms as T
from torch_geometric.data import Data, HeteroData
from torch_geometric.nn import HGTConv, SAGEConv, to_hetero, to_hetero_with_bases
from torch_geometric.utils import negative_sampling

torch.manual_seed(0)
torch.set_num_threads(1)


def r(t, n=6):
    return [round(v, 4) for v in t.flatten().tolist()[:n]]


data = HeteroData()
data["paper"].x = torch.randn(6, 4)
data["author"].x = torch.randn(4, 3)
data["author", "writes", "paper"].edge_index = torch.tensor([[0, 1, 2, 3, 0], [0, 1, 2, 3, 4]])
data["paper", "cites", "paper"].edge_index = torch.tensor([[0, 1, 2, 4], [1, 2, 3, 5]])
data["paper"].y = torch.tensor([0, 1, 0, 1, 1, 0])
data = T.ToUndirected()(data)
print("metadata", data.metadata())
print("edge types", sorted(str(k) for k in data.edge_index_dict))


class GNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = SAGEConv((-1, -1), 8)
        self.conv2 = SAGEConv((-1, -1), 2)

    def forward(self, x, edge_index):
        x = self.conv1(x, edge_index).relu()
        return self.conv2(x, edge_index)


torch.manual_seed(1)
model = to_hetero(GNN(), data.metadata(), aggr="sum")
with torch.no_grad():
    out = model(data.x_dict, data.edge_index_dict)
print("to_hetero", sorted((k, tuple(v.shape)) for k, v in out.items()))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for step in range(3):
    opt.zero_grad()
    out = model(data.x_dict, data.edge_index_dict)
    loss = F.cross_entropy(out["paper"], data["paper"].y)
    loss.backward()
    opt.step()
    print("step", step, round(loss.item(), 4))
torch.manual_seed(2)
based = to_hetero_with_bases(GNN(), data.metadata(), num_bases=2, in_channels={"x": 4})
data2 = data.clone()
data2["author"].x = torch.randn(4, 4)
with torch.no_grad():
    print("bases", sorted((k, tuple(v.shape)) for k, v in based(data2.x_dict, data2.edge_index_dict).items()))
torch.manual_seed(3)
hgt = HGTConv(-1, 8, data.metadata(), heads=2)
with torch.no_grad():
    h = hgt(data.x_dict, data.edge_index_dict)
print("hgt", sorted((k, tuple(v.shape)) for k, v in h.items()), r(h["paper"]))

g = torch.Generator().manual_seed(4)
homo = Data(x=torch.randn(20, 4, generator=g), edge_index=torch.randint(0, 20, (2, 60), generator=g))
torch.manual_seed(5)
neg = negative_sampling(homo.edge_index, num_nodes=20, num_neg_samples=10)
print("negative", tuple(neg.shape))
print("pyg", torch_geometric.__version__, "ok")
