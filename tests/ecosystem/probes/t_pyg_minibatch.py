# library: torch_geometric
"""PyG mini-batches of small graphs through DataLoader (Batch), GATConv and GINConv models with global_mean_pool / global_add_pool, a short training loop."""

import torch
from torch_geometric.data import Data
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GATConv, GINConv, global_add_pool, global_mean_pool

torch.manual_seed(0)
torch.set_num_threads(1)
graphs = []
for i in range(12):
    n = 4 + i % 3
    ei = torch.randint(0, n, (2, 2 * n))
    graphs.append(Data(x=torch.randn(n, 5), edge_index=ei, y=torch.tensor([i % 2])))
loader = DataLoader(graphs, batch_size=4, shuffle=False)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gat = GATConv(5, 8, heads=2)
        self.gin = GINConv(
            torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8)),
            train_eps=True,
        )
        self.out = torch.nn.Linear(16, 2)

    def forward(self, d):
        h = self.gat(d.x, d.edge_index).relu()
        h = self.gin(h, d.edge_index)
        return self.out(torch.cat([global_mean_pool(h, d.batch), global_add_pool(h, d.batch)], 1))


net = Net()
opt = torch.optim.Adam(net.parameters(), lr=0.01)
for epoch in range(3):
    total = 0.0
    for b in loader:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(b), b.y)
        loss.backward()
        opt.step()
        total += loss.item()
    print("epoch", epoch, "loss %.5f" % total, "batch", b.num_graphs, b.num_nodes, tuple(b.batch.shape))
