# library: torch_geometric
"""PyG's tensor types printed and used: HashTensor (its repr goes through torch._tensor_str._str_intern: failed before the fix) with and without values, lookups by key, EdgeIndex and Index reprs, Data/Batch summaries; GIN, GINE, SAGE, GAT and EdgeConv graph classifiers trained on Batch mini-batches with global mean/max/add pooling; to_dense_adj, to_dense_batch, scatter reductions and graph utilities."""

import torch
import torch_geometric.utils as U
from torch import nn
from torch_geometric import EdgeIndex, HashTensor, Index
from torch_geometric.data import Batch, Data
from torch_geometric.loader import DataLoader
from torch_geometric.nn import (
    MLP,
    EdgeConv,
    GATConv,
    GINConv,
    GINEConv,
    GraphConv,
    SAGEConv,
    global_add_pool,
    global_max_pool,
    global_mean_pool,
)
from torch_geometric.utils import scatter, softmax, to_dense_adj, to_dense_batch

torch.set_num_threads(1)
torch.manual_seed(0)


def r(t):
    return [round(float(v), 4) for v in t.flatten()[:6]]


h = HashTensor(torch.tensor([10, 20, 30, 40]), value=torch.randn(4, 2))
print(h)
print(repr(h[torch.tensor([30, 10])]))
print(HashTensor(torch.tensor([7, 3, 5])))
hv = HashTensor(torch.tensor([5, 1]), value=torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64))
print(hv, hv.dtype, hv.size())
print(EdgeIndex([[0, 1, 1, 2], [1, 0, 2, 1]], sparse_size=(3, 3), sort_order="row"))
print(Index([0, 1, 1, 2], dim_size=3, is_sorted=True))
graphs = []
for i in range(12):
    n = 4 + i % 4
    ei = U.erdos_renyi_graph(n, 0.5)
    if ei.numel() == 0:
        ei = torch.tensor([[0, 1], [1, 0]])
    graphs.append(
        Data(
            x=torch.randn(n, 3), edge_index=ei, edge_attr=torch.randn(ei.size(1), 2), y=torch.tensor([i % 2])
        )
    )
b = Batch.from_data_list(graphs[:3])
print("batch", b, b.num_graphs, b.batch.tolist(), b.ptr.tolist())
print(
    "dense adj",
    tuple(to_dense_adj(b.edge_index, b.batch).shape),
    to_dense_adj(b.edge_index, b.batch).sum().item(),
)
xd, mask = to_dense_batch(b.x, b.batch, fill_value=-1.0)
print("dense batch", tuple(xd.shape), mask.sum(1).tolist(), r(xd[1, -1]))
for red in ["sum", "mean", "max", "min", "mul"]:
    print("scatter", red, r(scatter(b.x, b.batch, dim=0, reduce=red)))
print("softmax", r(softmax(b.x[:, 0], b.batch)))
print("degree", U.degree(b.edge_index[0], b.num_nodes).tolist())
ei, ea = U.add_self_loops(graphs[0].edge_index, graphs[0].edge_attr, fill_value="mean")
print("self loops", tuple(ei.shape), r(ea[-1]))
print("subgraph", U.subgraph(torch.tensor([0, 1, 2]), graphs[1].edge_index, relabel_nodes=True)[0].tolist())
print("k_hop", [t.tolist() for t in U.k_hop_subgraph(0, 1, graphs[2].edge_index)[:2]])


class Net(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        if kind == "gin":
            self.c1 = GINConv(MLP([3, 16, 16]), train_eps=True)
            self.c2 = GINConv(nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16)))
        elif kind == "gine":
            self.c1 = GINEConv(MLP([3, 16, 16]), edge_dim=2)
            self.c2 = GINEConv(MLP([16, 16]), edge_dim=2)
        elif kind == "sage":
            self.c1 = SAGEConv(3, 16, aggr="max", normalize=True)
            self.c2 = SAGEConv(16, 16, aggr=["mean", "max"], project=True)
        elif kind == "gat":
            self.c1 = GATConv(3, 8, heads=2, dropout=0.0, edge_dim=2)
            self.c2 = GATConv(16, 16, heads=1, concat=False, add_self_loops=False)
        else:
            self.c1 = EdgeConv(MLP([6, 16]), aggr="max")
            self.c2 = GraphConv(16, 16, aggr="mean")
        self.head = nn.Linear(48, 2)

    def forward(self, d):
        ex = dict(edge_attr=d.edge_attr) if self.kind in ("gine", "gat") else {}
        h = self.c1(d.x, d.edge_index, **ex).relu()
        h = self.c2(h, d.edge_index, **({} if self.kind == "gat" else ex)).relu()
        p = torch.cat(
            [global_mean_pool(h, d.batch), global_max_pool(h, d.batch), global_add_pool(h, d.batch)], 1
        )
        return self.head(p)


for kind in ["gin", "gine", "sage", "gat", "edge"]:
    torch.manual_seed(0)
    net = Net(kind)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    loader = DataLoader(graphs, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(0))
    for epoch in range(2):
        tot = 0.0
        for d in loader:
            loss = nn.functional.cross_entropy(net(d), d.y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            tot += float(loss)
        print(kind, epoch, round(tot, 4))
