# library: torch_geometric
"""PyG layers beyond the basics (GCN2, Transformer, GINE, Cheb, APPNP, PNA, GraphNorm, Set2Set, SortAggregation, ...), a custom MessagePassing, RandomLinkSplit, VGAE, HeteroConv, GraphUNet (sparse_csr_tensor with keywords), DeepGraphInfomax."""

import torch
import torch_geometric
import torch_geometric.transforms as T
from torch_geometric.data import Data, HeteroData
from torch_geometric.nn import (
    APPNP,
    VGAE,
    ARMAConv,
    AttentionalAggregation,
    ChebConv,
    DeepGraphInfomax,
    GCN2Conv,
    GCNConv,
    GENConv,
    GINEConv,
    GraphNorm,
    GraphUNet,
    HeteroConv,
    LayerNorm,
    MessagePassing,
    PNAConv,
    SAGEConv,
    Set2Set,
    SGConv,
    SortAggregation,
    TAGConv,
    TransformerConv,
)
from torch_geometric.utils import (
    degree,
    get_laplacian,
    homophily,
    k_hop_subgraph,
    negative_sampling,
    to_dense_batch,
)

torch.set_num_threads(1)


def f(x):
    return f"{float(x):.5f}"


torch_geometric.seed_everything(0)
N = 20
ei = torch.randint(0, N, (2, 60))
ei = torch_geometric.utils.coalesce(torch_geometric.utils.to_undirected(ei))
ei, _ = torch_geometric.utils.remove_self_loops(ei)
x = torch.randn(N, 8)
ea = torch.rand(ei.size(1), 4)
batch = torch.tensor([0] * 10 + [1] * 10)
print("graph", ei.size(1), f(x.sum()))
layers = [
    ("gcn2", GCN2Conv(8, alpha=0.1, theta=0.5, layer=1), lambda c: c(x, x, ei)),
    ("transformer", TransformerConv(8, 4, heads=2, edge_dim=4, beta=True), lambda c: c(x, ei, ea)),
    ("gine", GINEConv(torch.nn.Linear(8, 8), edge_dim=4), lambda c: c(x, ei, ea)),
    ("cheb", ChebConv(8, 4, K=3), lambda c: c(x, ei)),
    ("appnp", APPNP(K=3, alpha=0.1), lambda c: c(x, ei)),
    ("sg", SGConv(8, 4, K=2), lambda c: c(x, ei)),
    ("tag", TAGConv(8, 4), lambda c: c(x, ei)),
    ("arma", ARMAConv(8, 4, num_stacks=2), lambda c: c(x, ei)),
    ("gen", GENConv(8, 8, aggr="softmax", learn_t=True), lambda c: c(x, ei)),
    (
        "pna",
        PNAConv(
            8,
            4,
            aggregators=["mean", "max", "std"],
            scalers=["identity", "amplification"],
            deg=torch.bincount(degree(ei[1], N).long()),
        ),
        lambda c: c(x, ei),
    ),
    ("graphnorm", GraphNorm(8), lambda c: c(x, batch)),
    ("layernorm", LayerNorm(8, mode="graph"), lambda c: c(x, batch)),
    ("set2set", Set2Set(8, processing_steps=2), lambda c: c(x, batch)),
    ("attnagg", AttentionalAggregation(torch.nn.Linear(8, 1)), lambda c: c(x, batch)),
    ("sortagg", SortAggregation(k=4), lambda c: c(x, batch)),
]
for name, mod, call in layers:
    torch.manual_seed(1)
    mod.reset_parameters() if hasattr(mod, "reset_parameters") else None
    out = call(mod)
    out.sum().backward() if out.requires_grad else None
    print(name, tuple(out.shape), f(out.sum()), f(out.abs().sum()))


class EdgeCount(MessagePassing):
    def __init__(self):
        super().__init__(aggr="add", flow="target_to_source")

    def forward(self, x, ei):
        return self.propagate(ei, x=x, norm=torch.ones(ei.size(1)))

    def message(self, x_j, x_i, norm):
        return norm.view(-1, 1) * (x_j - x_i)


print("custom", f(EdgeCount()(x, ei).abs().sum()))
db, mask = to_dense_batch(x, batch)
print("dense", tuple(db.shape), int(mask.sum()))
torch.manual_seed(2)
neg = negative_sampling(ei, num_nodes=N, num_neg_samples=10)
print("neg", tuple(neg.shape))
data = Data(x=x, edge_index=ei)
split = T.RandomLinkSplit(num_val=0.1, num_test=0.2, is_undirected=True, add_negative_train_samples=False)
tr, va, te = split(data)
print("linksplit", tr.edge_label_index.size(1), va.edge_label_index.size(1), te.edge_label_index.size(1))
torch.manual_seed(3)


class Enc(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = GCNConv(8, 16)
        self.mu = GCNConv(16, 4)
        self.ls = GCNConv(16, 4)

    def forward(self, x, ei):
        h = self.c(x, ei).relu()
        return self.mu(h, ei), self.ls(h, ei)


vg = VGAE(Enc())
opt = torch.optim.Adam(vg.parameters(), lr=0.01)
for i in range(3):
    opt.zero_grad()
    z = vg.encode(tr.x, tr.edge_index)
    loss = (
        vg.recon_loss(
            z, tr.pos_edge_label_index if hasattr(tr, "pos_edge_label_index") else tr.edge_label_index
        )
        + vg.kl_loss() / N
    )
    loss.backward()
    opt.step()
    print("vgae", i, f(loss))
vg.eval()
print("vgae eval", f(vg.encode(x, ei).sum()))
h = HeteroData()
h["a"].x = torch.randn(5, 4)
h["b"].x = torch.randn(6, 3)
h["a", "to", "b"].edge_index = torch.tensor([[0, 1, 2, 4], [1, 2, 5, 0]])
h["b", "rev", "a"].edge_index = torch.tensor([[1, 2, 5, 0], [0, 1, 2, 4]])
torch.manual_seed(4)
hc = HeteroConv({("a", "to", "b"): SAGEConv((4, 3), 8), ("b", "rev", "a"): SAGEConv((3, 4), 8)}, aggr="sum")
ho = hc(h.x_dict, h.edge_index_dict)
print("hetero", {k: (tuple(v.shape), f(v.sum())) for k, v in sorted(ho.items())})
torch.manual_seed(5)
gu = GraphUNet(8, 16, 4, depth=2, pool_ratios=0.5)
print("unet", f(gu(x, ei).sum()))
torch.manual_seed(6)
dgi = DeepGraphInfomax(
    16,
    encoder=GCNConv(8, 16),
    summary=lambda z, *a, **k: z.mean(0).sigmoid(),
    corruption=lambda x, ei: (x[torch.randperm(x.size(0))], ei),
)
pz, nz, s = dgi(x, ei)
print("dgi", f(dgi.loss(pz, nz, s)))
sub, sei, mapping, em = k_hop_subgraph(0, 2, ei, relabel_nodes=True)
print("khop", sub.tolist()[:8], sei.size(1))
print("lap", f(get_laplacian(ei, normalization="sym")[1].sum()), f(homophily(ei, torch.arange(N) % 2)))
print("pyg ok")
