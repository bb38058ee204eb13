# library: torch_geometric
"""PyG attention convs and models: GATConv/GATv2Conv/TransformerConv with edge features and attention weights, SAGEConv, GraphConv, ChebConv, APPNP, GAE/VGAE with negative_sampling, RandomLinkSplit and NormalizeFeatures transforms, GNNExplainer, JumpingKnowledge, BatchNorm/LayerNorm graph norms, to_hetero-free HeteroConv."""

import random
import warnings

import torch
import torch_geometric.transforms as Tr
from torch import nn
from torch_geometric.data import Data, HeteroData
from torch_geometric.explain import Explainer, GNNExplainer
from torch_geometric.nn import (
    APPNP,
    GAT,
    GIN,
    MLP,
    VGAE,
    ChebConv,
    GATConv,
    GATv2Conv,
    GCNConv,
    GraphConv,
    GraphNorm,
    GraphSAGE,
    HeteroConv,
    InstanceNorm,
    JumpingKnowledge,
    LayerNorm,
    PairNorm,
    SAGEConv,
    TransformerConv,
)
from torch_geometric.utils import (
    batched_negative_sampling,
    negative_sampling,
    structured_negative_sampling,
)

warnings.filterwarnings("ignore")
torch.set_num_threads(1)
torch.manual_seed(0)
random.seed(0)


def r(x):
    return round(float(x), 4)


N = 12
ei = torch.randint(0, N, (2, 40))
ea = torch.rand(40, 3)
x = torch.randn(N, 5)
for conv in [
    GATConv(5, 4, heads=2, edge_dim=3, concat=True),
    GATv2Conv(5, 4, heads=2, edge_dim=3, share_weights=True),
    TransformerConv(5, 4, heads=2, edge_dim=3, beta=True),
]:
    out, (aei, alpha) = conv(x, ei, ea, return_attention_weights=True)
    out.sum().backward()
    print(
        type(conv).__name__,
        out.shape,
        r(out.sum()),
        aei.shape,
        r(alpha.sum()),
        r(sum(p.grad.norm() for p in conv.parameters() if p.grad is not None)),
    )
for conv in [
    SAGEConv(5, 4, aggr="max", normalize=True, project=True),
    GraphConv(5, 4, aggr="mean"),
    ChebConv(5, 4, K=3),
    APPNP(K=3, alpha=0.1),
]:
    print(type(conv).__name__, r(conv(x, ei).sum()))
print(
    "models",
    r(GIN(5, 8, 2, out_channels=3, jk="cat")(x, ei).sum()),
    r(GraphSAGE(5, 8, 2, dropout=0.0)(x, ei).sum()),
    r(GAT(5, 8, 2, v2=True, heads=2)(x, ei).sum()),
)
print("mlp", r(MLP([5, 8, 3], norm="batch_norm", dropout=0.0)(x).sum()))
batch = torch.tensor([0] * 6 + [1] * 6)
print(
    "norms",
    r(GraphNorm(5)(x, batch).abs().sum()),
    r(LayerNorm(5, mode="graph")(x, batch).abs().sum()),
    r(PairNorm()(x, batch).abs().sum()),
    r(InstanceNorm(5)(x, batch).abs().sum()),
)
jk = JumpingKnowledge("lstm", channels=5, num_layers=2)
print("jk", r(jk([x, x * 2]).sum()), r(JumpingKnowledge("max")([x, -x]).sum()))
torch.manual_seed(1)
neg = negative_sampling(ei, num_nodes=N, num_neg_samples=20)
print("neg", neg.shape, bool(((neg[0] * N + neg[1]).unsqueeze(1) != (ei[0] * N + ei[1]).unsqueeze(0)).all()))
i, j, k = structured_negative_sampling(ei, N)
print("sneg", i.shape, k.shape)
print("bneg", batched_negative_sampling(ei[:, (ei[0] < 6) & (ei[1] < 6)], batch, num_neg_samples=4).shape[0])
torch.manual_seed(2)
data = Data(x=torch.rand(N, 5) * 3, edge_index=ei)
data = Tr.NormalizeFeatures()(data)
print("normfeat", r(data.x.sum(1).mean()))
tr, va, te = Tr.RandomLinkSplit(
    num_val=0.1, num_test=0.2, is_undirected=False, add_negative_train_samples=True
)(data)
print(
    "linksplit",
    tr.edge_label_index.shape,
    va.edge_label_index.shape,
    te.edge_label.sum().item(),
    tr.edge_label.tolist()[:8],
)
d2 = Tr.Compose([Tr.ToUndirected(), Tr.AddSelfLoops(), Tr.GCNNorm()])(Data(x=x, edge_index=ei))
print("compose", d2.edge_index.shape, r(d2.edge_weight.sum()))
torch.manual_seed(3)


class Enc(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = GCNConv(5, 8)
        self.mu = GCNConv(8, 4)
        self.ls = GCNConv(8, 4)

    def forward(self, x, ei):
        h = self.c(x, ei).relu()
        return self.mu(h, ei), self.ls(h, ei)


vgae = VGAE(Enc())
opt = torch.optim.Adam(vgae.parameters(), lr=0.01)
for s in range(3):
    opt.zero_grad()
    z = vgae.encode(tr.x, tr.edge_index)
    loss = vgae.recon_loss(z, tr.edge_index) + vgae.kl_loss() / N
    loss.backward()
    opt.step()
    print("vgae", s, r(loss))
vgae.eval()
z = vgae.encode(tr.x, tr.edge_index)
print("vgae z", r(z.sum()), r(vgae.decoder(z, te.edge_label_index, sigmoid=True).sum()))
torch.manual_seed(4)


class G(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = GCNConv(5, 8)
        self.c2 = GCNConv(8, 3)

    def forward(self, x, edge_index):
        return self.c2(self.c1(x, edge_index).relu(), edge_index)


g = G()
ex = Explainer(
    model=g,
    algorithm=GNNExplainer(epochs=10, lr=0.01),
    explanation_type="model",
    node_mask_type="attributes",
    edge_mask_type="object",
    model_config=dict(mode="multiclass_classification", return_type="raw", task_level="node"),
)
e = ex(x, ei, index=3)
print("explain", e.node_mask.shape, e.edge_mask.shape, r(e.edge_mask.sum()), r(e.node_mask.sum()))
hd = HeteroData()
hd["a"].x = torch.randn(4, 5)
hd["b"].x = torch.randn(3, 6)
hd["a", "to", "b"].edge_index = torch.tensor([[0, 1, 2, 3], [0, 1, 2, 0]])
hd["b", "rev", "a"].edge_index = torch.tensor([[0, 1, 2], [1, 2, 3]])
hc = HeteroConv(
    {("a", "to", "b"): SAGEConv((5, 6), 4), ("b", "rev", "a"): GATConv((6, 5), 4, add_self_loops=False)},
    aggr="sum",
)
out = hc(hd.x_dict, hd.edge_index_dict)
print("hetero", {k: (tuple(v.shape), r(v.sum())) for k, v in sorted(out.items())}, hd.metadata())
