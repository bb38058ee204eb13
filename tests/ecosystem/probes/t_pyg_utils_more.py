# library: torch_geometric
"""PyG utilities and layers: SAGEConv with mean/max aggregation, to_dense_batch and to_dense_adj, dropout_edge, subgraph, k_hop_subgraph, add_self_loops/degree, TopKPooling, global_max_pool; a backward through them."""

import torch
from torch_geometric.data import Batch, Data
from torch_geometric.nn import SAGEConv, TopKPooling, global_max_pool
from torch_geometric.utils import (
    add_self_loops,
    degree,
    dropout_edge,
    k_hop_subgraph,
    subgraph,
    to_dense_adj,
    to_dense_batch,
)

torch.manual_seed(0)
torch.set_num_threads(1)
data = [Data(x=torch.randn(n, 4), edge_index=torch.randint(0, n, (2, 3 * n))) for n in (5, 7, 4)]
b = Batch.from_data_list(data)
dense, mask = to_dense_batch(b.x, b.batch)
print("dense", tuple(dense.shape), mask.sum(1).tolist())
adj = to_dense_adj(b.edge_index, b.batch)
print("adj", tuple(adj.shape), adj.sum((1, 2)).tolist())
ei, em = dropout_edge(b.edge_index, p=0.3, training=True)
print("dropout_edge", ei.shape[1], int(em.sum()))
sub, _ = subgraph(torch.arange(6), b.edge_index, relabel_nodes=True)
print("subgraph", sub.shape[1], int(sub.max()))
subset, e2, mapping, _ = k_hop_subgraph(2, 1, b.edge_index, relabel_nodes=True)
print("khop", subset.tolist(), e2.shape[1], mapping.tolist())
loops, _ = add_self_loops(b.edge_index, num_nodes=b.num_nodes)
print("degree", degree(loops[0], b.num_nodes).tolist())
for aggr in ("mean", "max"):
    torch.manual_seed(0)
    conv = SAGEConv(4, 6, aggr=aggr)
    pool = TopKPooling(6, ratio=0.5)
    h = conv(b.x, b.edge_index).relu()
    h, ei2, _, bb, perm, score = pool(h, b.edge_index, batch=b.batch)
    out = global_max_pool(h, bb)
    out.sum().backward()
    print(
        aggr,
        tuple(out.shape),
        "%.5f" % out.sum().item(),
        perm.tolist(),
        "%.5f" % conv.lin_l.weight.grad.abs().sum().item(),
    )
