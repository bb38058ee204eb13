# library: torch_geometric
"""PyG's Index and EdgeIndex subclasses through the ops their dispatch tables name and the ones they pass through: to(dtype), clone, flip, sort (stable), index_select, narrow, slicing with an ellipsis, unbind, add/sub with scalars, cat of mixed types, unsqueeze/squeeze, detach, deepcopy, as_tensor, sparse conversion, matmul with a dense matrix and its gradient; HashTensor lookups when available."""

import copy

import torch
import torch_geometric
from torch_geometric import EdgeIndex, Index

torch.set_num_threads(1)
torch.manual_seed(0)


def show(name, t):
    extra = ""
    if isinstance(t, EdgeIndex):
        extra = f" sort={t.sort_order} undirected={t.is_undirected} size={t.sparse_size()}"
    elif isinstance(t, Index):
        extra = f" dim_size={t.dim_size} sorted={t.is_sorted}"
    print(
        name,
        type(t).__name__,
        t.as_subclass(torch.Tensor).tolist() if isinstance(t, torch.Tensor) else t,
        extra,
    )


idx = Index([0, 1, 1, 2, 4], dim_size=5, is_sorted=True)
show("index", idx)
show("long->int", idx.to(torch.int32))
show("clone", idx.clone())
show("flip", idx.flip(0))
show("sort", idx.sort(stable=True, descending=True)[0])
show("index_select", idx.index_select(0, torch.tensor([0, 2])))
show("narrow", idx.narrow(0, 1, 3))
show("slice", idx[1:4])
show("ellipsis", idx[..., 2:])
show("add", idx + 1)
show("sub", idx - 1)
show("cat", torch.cat([idx, Index([3, 4], dim_size=5, is_sorted=True)]))
show("detach", idx.detach())
show("deepcopy", copy.deepcopy(idx))
show("get_indptr", idx.get_indptr())

ei = EdgeIndex([[0, 1, 1, 2, 3], [1, 0, 2, 1, 2]], sparse_size=(4, 4), sort_order="row")
show("edge_index", ei)
show("flip", ei.flip(0))
show("to", ei.to(torch.int32))
show("select", ei[0])
show("ellipsis", ei[..., 1:3])
show("unbind", ei.unbind(0)[1])
show("sort_by col", ei.sort_by("col")[0])
show("cat", torch.cat([ei, ei], dim=1))
show("add", ei + 1)
show("deepcopy", copy.deepcopy(ei))
show("detach", ei.detach())
show("clone", ei.clone())
x = torch.randn(4, 3, requires_grad=True)
out = ei.matmul(x)
out.sum().backward()
show("matmul", out.detach().round(decimals=4))
show("grad", x.grad)
w = torch.rand(5, requires_grad=True)
out = ei.matmul(x, input_value=w, reduce="sum")
out.pow(2).sum().backward()
show("weighted", out.detach().round(decimals=4))
show("w grad", w.grad.round(decimals=4))
show("dense", ei.to_dense())
show("csr", ei.to_sparse_csr().crow_indices())
show("csc ptr", ei.get_csc()[0][0])
try:
    from torch_geometric import HashTensor

    ht = HashTensor(torch.tensor([10, 30, 20, 50]))
    show(
        "hash lookup",
        ht.get_instance(torch.tensor([20, 40, 10]))
        if hasattr(ht, "get_instance")
        else ht[torch.tensor([20, 40, 10])],
    )
except Exception as e:  # HashTensor needs pyg-lib or pandas
    print("hash tensor unavailable", type(e).__name__)
print("torch_geometric", torch_geometric.__version__, "ok")
