# library: torch_geometric
"""PyG graph poolings and learnable aggregations on two small graphs: ASAPooling (which selects clusters with index_select on a sparse COO matrix: failed before the fix), SAGPooling, EdgePooling, MemPooling, DMoNPooling, dense_diff_pool, dense_mincut_pool; Softmax/PowerMean/LSTM/SetTransformer/GRU/MLP/Set2Set/VariancePreserving/Equilibrium aggregations."""

import torch
import torch_geometric.nn as gnn
from torch_geometric.utils import to_dense_adj, to_dense_batch

torch.set_num_threads(1)


def r(t, n=4):
    return [round(v, 4) for v in t.detach().flatten().tolist()[:n]]


g = torch.Generator().manual_seed(0)
N, F = 8, 6
ei = torch.tensor([[0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 4, 6, 1, 3], [1, 2, 3, 4, 5, 6, 7, 0, 2, 4, 6, 0, 5, 7]])
batch = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1])

h = torch.randn(N, F, generator=g)
pools = {
    "sag": lambda: gnn.SAGPooling(F, ratio=0.5)(h, ei, batch=batch),
    "edge": lambda: gnn.EdgePooling(F)(h, ei, batch),
    "asap": lambda: gnn.ASAPooling(F, ratio=0.5)(h, ei, batch=batch),
    "mem": lambda: gnn.MemPooling(F, 4, heads=2, num_clusters=2)(h, batch),
    "dmon": lambda: gnn.DMoNPooling([F, 4], k=2)(to_dense_batch(h, batch)[0], to_dense_adj(ei, batch)),
}
for name, fn in pools.items():
    torch.manual_seed(0)
    try:
        out = fn()
        print(
            "pool",
            name,
            [tuple(o.shape) if torch.is_tensor(o) else type(o).__name__ for o in out][:4],
            r(out[0]) if torch.is_tensor(out[0]) else r(out[1]),
            flush=True,
        )
    except Exception as e:
        print("pool", name, "error", type(e).__name__, str(e)[:100], flush=True)
xd, mask = to_dense_batch(h, batch)
adj = to_dense_adj(ei, batch)
s = torch.randn(2, 4, 2, generator=g)
print("diffpool", [r(v) for v in gnn.dense_diff_pool(xd, adj, s, mask)])
print("mincut", [r(v) for v in gnn.dense_mincut_pool(xd, adj, s, mask)])

aggs = {
    "softmax": gnn.aggr.SoftmaxAggregation(learn=True),
    "powermean": gnn.aggr.PowerMeanAggregation(learn=True),
    "lstm": gnn.aggr.LSTMAggregation(F, 4),
    "settransformer": gnn.aggr.SetTransformerAggregation(F, num_seed_points=1, heads=2),
    "gru": gnn.aggr.GRUAggregation(F, 4),
    "mlp": gnn.aggr.MLPAggregation(F, 4, max_num_elements=4, num_layers=1),
    "set2set": gnn.aggr.Set2Set(F, processing_steps=2),
    "varpres": gnn.aggr.VariancePreservingAggregation(),
    "equilibrium": gnn.aggr.EquilibriumAggregation(F, 4, num_layers=[8], grad_iter=2),
}
for name, agg in aggs.items():
    torch.manual_seed(0)
    try:
        out = agg(h, batch)
        print("aggr", name, tuple(out.shape), r(out), flush=True)
    except Exception as e:
        print("aggr", name, "error", type(e).__name__, str(e)[:100], flush=True)
