# library: torch_geometric
"""PyG's tensor subclasses (EdgeIndex and Index: built with Tensor._make_wrapper_subclass, computing in __torch_dispatch__): construction, sorting, CSR/CSC caches, indexing, cat, flip, to_dense, sparse-dense matmul, Index pointers; GIN, GATv2, GraphSAGE and GCN layers run on an EdgeIndex; a graph-classification model with mini-batching, TopKPooling, global add/max pooling and a few training steps."""

import torch
import torch.nn.functional as F
import torch_geometric
from torch_geometric import EdgeIndex, Index
from torch_geometric.data import Batch, Data
from torch_geometric.nn import (
    GATv2Conv,
    GCNConv,
    GINConv,
    SAGEConv,
    TopKPooling,
    global_add_pool,
    global_max_pool,
)
from torch_geometric.utils import to_undirected

torch.manual_seed(0)
torch.set_num_threads(1)


def r(t, n=8):
    return [round(v, 5) for v in t.flatten().tolist()[:n]]


ei = EdgeIndex([[0, 1, 1, 2, 3], [1, 0, 2, 1, 2]], sparse_size=(4, 4))
print(
    type(ei).__name__,
    tuple(ei.shape),
    str(ei.dtype).rsplit(".", 1)[-1],
    ei.is_sorted,
    ei.sparse_size(),
    ei.numel(),
)
print(ei)
s, perm = ei.sort_by("col")
print("sort_by col", type(s).__name__, s.tolist(), perm.tolist(), s.is_sorted_by_col)
srow = ei.sort_by("row")[0]
(rowptr, col), _ = srow.get_csr()
print("csr", rowptr.tolist(), col.tolist())
(colptr, row), p2 = srow.get_csc()
print("csc", colptr.tolist(), row.tolist(), p2.tolist())
print("slice", ei[:, 1:3].tolist(), type(ei[:, 1:3]).__name__, type(ei[0]).__name__, type(ei[1:]).__name__)
print("flip", type(ei.flip([0])).__name__, ei.flip([0]).tolist())
cat = torch.cat([ei, ei], dim=1)
print("cat", type(cat).__name__, cat.sparse_size(), tuple(cat.shape))
print("dense", ei.to_dense().tolist())
x = torch.randn(4, 3)
print("matmul", r(srow.matmul(x), 12))
val = torch.rand(5)
print("weighted", r(srow.matmul(x, input_value=val), 12))
print("add", type(ei + 1).__name__, type(ei.float()).__name__, type(ei.sum()).__name__)
idx = Index([0, 1, 1, 2, 2, 2], dim_size=4, is_sorted=True)
print(
    "Index",
    type(idx).__name__,
    idx.get_indptr().tolist(),
    idx.dim_size,
    type(idx[1:]).__name__,
    type(idx + 0).__name__,
)
print(idx)

und = to_undirected(torch.tensor([[0, 1, 2, 3, 4], [1, 2, 3, 4, 0]]))
e2 = EdgeIndex(und, sparse_size=(5, 5)).sort_by("row")[0]
x5 = torch.randn(5, 4)
for conv in (
    GCNConv(4, 3),
    SAGEConv(4, 3),
    GINConv(
        torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)), train_eps=True
    ),
    GATv2Conv(4, 3, heads=2, concat=False),
):
    torch.manual_seed(1)
    conv.reset_parameters()
    a = conv(x5, e2)
    b = conv(x5, und)
    print(type(conv).__name__, r(a), torch.allclose(a, b, atol=1e-5))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = GINConv(
            torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16))
        )
        self.pool = TopKPooling(16, ratio=0.5)
        self.conv2 = GATv2Conv(16, 16, heads=2, concat=False)
        self.lin = torch.nn.Linear(32, 2)

    def forward(self, data):
        x, edge_index, batch = data.x, data.edge_index, data.batch
        x = F.relu(self.conv1(x, edge_index))
        x, edge_index, _, batch, _, _ = self.pool(x, edge_index, batch=batch)
        x = F.relu(self.conv2(x, edge_index))
        return self.lin(torch.cat([global_add_pool(x, batch), global_max_pool(x, batch)], dim=1))


graphs = []
g = torch.Generator().manual_seed(3)
for i in range(6):
    n = 4 + i % 3
    src = torch.arange(n)
    edge = to_undirected(torch.stack([src, (src + 1) % n]))
    graphs.append(Data(x=torch.randn(n, 3, generator=g), edge_index=edge, y=torch.tensor([i % 2])))
batch = Batch.from_data_list(graphs)
print("batch", batch.num_graphs, batch.num_nodes, tuple(batch.edge_index.shape), batch.ptr.tolist())
torch.manual_seed(4)
net = Net()
opt = torch.optim.Adam(net.parameters(), lr=0.01)
for step in range(4):
    opt.zero_grad()
    out = net(batch)
    loss = F.cross_entropy(out, batch.y)
    loss.backward()
    opt.step()
    print("step", step, round(loss.item(), 5))
print("pyg", torch_geometric.__version__, "ok")
