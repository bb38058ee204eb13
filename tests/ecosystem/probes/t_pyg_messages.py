# library: torch_geometric
"""PyG message passing and utilities: GCNConv(cached=True) reusing its normalisation across steps (and after eval), MessagePassing subclasses with aggr="max", "min", "mul", a list of aggregations and a MultiAggregation in "cat"/"proj"/"attn" mode, an edge_update/edge_updater, bipartite propagate with size, message_and_aggregate over a SparseTensor-free adjacency (torch.sparse); torch_geometric.utils scatter (sum/mean/max/min/mul), softmax by index and by ptr, segment, dropout_edge, mask_feature, unbatch/unbatch_edge_index, to_dense_batch/to_dense_adj, coalesce with reduce, spmm, index_to_mask/mask_to_index, cumsum, select, grid, add_remaining_self_loops with fill values; global_max/add/mean pooling over a Batch; the GCN/GAT/GIN/EdgeCNN-free basic models with jk; gradients through each."""

import torch
import torch.nn.functional as F
import torch_geometric
from torch_geometric.data import Batch, Data
from torch_geometric.nn import (
    GAT,
    GCN,
    GIN,
    GCNConv,
    MessagePassing,
    global_add_pool,
    global_max_pool,
    global_mean_pool,
)
from torch_geometric.nn.aggr import MultiAggregation
from torch_geometric.utils import (
    add_remaining_self_loops,
    coalesce,
    cumsum,
    dropout_edge,
    grid,
    index_to_mask,
    mask_feature,
    mask_to_index,
    scatter,
    segment,
    select,
    softmax,
    spmm,
    to_dense_adj,
    to_dense_batch,
    to_torch_coo_tensor,
    unbatch,
    unbatch_edge_index,
)

torch.manual_seed(0)
torch.set_num_threads(1)


def r(t, n=4):
    return [round(v, n) for v in t.detach().flatten().tolist()[:6]]


def s(t):
    return round(float(t.detach().abs().sum()), 4)


N = 10
edge_index = torch.randint(0, N, (2, 30))
x = torch.randn(N, 8)
data = Data(x=x, edge_index=edge_index, y=torch.randint(0, 3, (N,)))

conv = GCNConv(8, 3, cached=True)
opt = torch.optim.Adam(conv.parameters(), lr=0.05)
losses = []
for _ in range(4):
    out = conv(data.x, data.edge_index)
    loss = F.cross_entropy(out, data.y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(round(loss.item(), 5))
print("cached gcn", losses, conv._cached_edge_index is not None)
conv.eval()
print("cached eval", s(conv(data.x, torch.empty(2, 0, dtype=torch.long))))
conv.reset_parameters()
print("after reset cache", conv._cached_edge_index is None)


class Agg(MessagePassing):
    def __init__(self, aggr, **kw):
        super().__init__(aggr=aggr, **kw)
        self.lin = torch.nn.Linear(8, 4)

    def forward(self, x, edge_index, size=None):
        return self.propagate(
            edge_index,
            x=self.lin(x) if isinstance(x, torch.Tensor) else (self.lin(x[0]), self.lin(x[1])),
            size=size,
        )

    def message(self, x_j, x_i):
        return x_j - 0.5 * x_i


for aggr, kw in [
    ("max", {}),
    ("min", {}),
    ("mul", {}),
    (["mean", "max", "std"], {}),
    (MultiAggregation(["sum", "max"], mode="proj", mode_kwargs=dict(in_channels=4, out_channels=4)), {}),
    (
        MultiAggregation(
            ["mean", "min"], mode="attn", mode_kwargs=dict(in_channels=4, out_channels=4, num_heads=2)
        ),
        {},
    ),
]:
    torch.manual_seed(0)
    m = Agg(aggr, **kw)
    xr = x.clone().requires_grad_()
    o = m(xr, edge_index)
    o.sum().backward()
    name = aggr if isinstance(aggr, str) else (aggr if isinstance(aggr, list) else aggr.mode)
    print("aggr", name, tuple(o.shape), s(o), s(xr.grad))

torch.manual_seed(0)
bip = Agg("max")
xs, xd = torch.randn(6, 8), torch.randn(3, 8)
e = torch.tensor([[0, 1, 2, 3, 4, 5, 5], [0, 0, 1, 1, 2, 2, 0]])
print("bipartite", tuple(bip((xs, xd), e, size=(6, 3)).shape), s(bip((xs, xd), e, size=(6, 3))))


class EdgeScore(MessagePassing):
    def __init__(self):
        super().__init__(aggr="add")
        self.att = torch.nn.Linear(16, 1)

    def forward(self, x, edge_index):
        w = self.edge_updater(edge_index, x=x)
        return self.propagate(edge_index, x=x, w=w), w

    def edge_update(self, x_i, x_j):
        return torch.sigmoid(self.att(torch.cat([x_i, x_j], -1)))

    def message(self, x_j, w):
        return w * x_j


class SparseConv(MessagePassing):
    def forward(self, x, adj):
        return self.propagate(adj, x=x)

    def message_and_aggregate(self, adj_t, x):
        return spmm(adj_t, x, reduce="sum")


torch.manual_seed(0)
es = EdgeScore()
o, w = es(x, edge_index)
(o.sum() + w.sum()).backward()
print("edge_update", tuple(w.shape), s(o), s(es.att.weight.grad))
adj = to_torch_coo_tensor(edge_index, size=N)
print("sparse propagate", s(SparseConv()(x, adj.t())), s(SparseConv(aggr="add")(x, edge_index)))

src = torch.randn(7, 3, requires_grad=True)
idx = torch.tensor([0, 1, 0, 2, 1, 2, 2])
for red in ("sum", "mean", "max", "min", "mul"):
    out = scatter(src, idx, dim=0, dim_size=4, reduce=red)
    g = torch.autograd.grad(out.sum(), src)[0]
    print("scatter", red, r(out), s(g))
a = softmax(src[:, 0], idx)
print("softmax index", r(a), r(scatter(a, idx, reduce="sum")))
ptr = torch.tensor([0, 2, 5, 7])
print("softmax ptr", r(softmax(src[:, 0], ptr=ptr)))
print("segment", r(segment(src, ptr, reduce="mean")), r(segment(src, ptr, reduce="max")))
torch.manual_seed(0)
ei, mask = dropout_edge(edge_index, p=0.3)
print("dropout_edge", tuple(ei.shape), int(mask.sum()))
torch.manual_seed(0)
print("mask_feature", s(mask_feature(x, p=0.5, mode="col")[0]))
print("coalesce", coalesce(edge_index, torch.ones(30), num_nodes=N, reduce="max")[0].shape[1])
ei2, w2 = add_remaining_self_loops(edge_index, torch.rand(30), fill_value="mean", num_nodes=N)
print("self loops", tuple(ei2.shape), s(w2))
m = index_to_mask(torch.tensor([1, 3, 5]), size=7)
print(
    "masks",
    m.tolist(),
    mask_to_index(m).tolist(),
    cumsum(torch.tensor([2, 0, 3])).tolist(),
    select(torch.arange(6), m[:6], 0).tolist(),
)
gi, pos = grid(2, 3)
print("grid", tuple(gi.shape), tuple(pos.shape))

graphs = [Data(x=torch.randn(n, 8), edge_index=torch.randint(0, n, (2, 2 * n))) for n in (3, 5, 4)]
batch = Batch.from_data_list(graphs)
print("batch", batch.num_graphs, batch.ptr.tolist(), [tuple(t.shape) for t in unbatch(batch.x, batch.batch)])
print("unbatch edges", [tuple(t.shape) for t in unbatch_edge_index(batch.edge_index, batch.batch)])
dense, msk = to_dense_batch(batch.x, batch.batch, fill_value=-1.0)
print(
    "dense batch",
    tuple(dense.shape),
    msk.sum(1).tolist(),
    tuple(to_dense_adj(batch.edge_index, batch.batch).shape),
)
for pool in (global_mean_pool, global_max_pool, global_add_pool):
    print(pool.__name__, r(pool(batch.x, batch.batch)))

for model in (
    GCN(8, 16, 2, out_channels=3, jk="cat"),
    GAT(8, 16, 2, out_channels=3, heads=2, v2=True, jk="max"),
    GIN(8, 16, 2, out_channels=3, jk="lstm", norm="batch_norm"),
):
    torch.manual_seed(0)
    model.reset_parameters()
    o = model(batch.x, batch.edge_index)
    F.cross_entropy(global_mean_pool(o, batch.batch), torch.tensor([0, 1, 2])).backward()
    print(
        "model",
        type(model).__name__,
        tuple(o.shape),
        s(o),
        round(sum(float(p.grad.abs().sum()) for p in model.parameters() if p.grad is not None), 3),
    )
print("torch_geometric", torch_geometric.__version__, "ok")
