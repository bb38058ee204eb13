"""Ops on DTensors through sharding propagation, on real processes: each op's output
layout is PyTorch's and its whole equals the op on the whole tensors (in float64), and
gradients of DTensor leaves are DTensors laid out as the leaves."""

from __future__ import annotations

import numpy as np
import pytest

from dist_helpers import run_ranks

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3, 8))
W = RNG.standard_normal((6, 8))
B = RNG.standard_normal(6)
IDX = np.array([[0, 5, 9], [3, 3, 7]])
TABLE = RNG.standard_normal((10, 4))


def _ops(rank: int, world: int) -> dict:
    import disttorch as torch
    import disttorch.nn.functional as F
    from disttorch.distributed.device_mesh import init_device_mesh
    from disttorch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

    mesh = init_device_mesh("cpu", (world,))
    x, w, b = torch.tensor(X), torch.tensor(W), torch.tensor(B)

    def d(t, p):
        return distribute_tensor(t, mesh, [p])

    def seen(t):
        return (t.placements, t.global_shape, t.full_tensor().numpy())

    out = {
        "colwise": seen(F.linear(d(x, Replicate()), d(w, Shard(0)), d(b, Shard(0)))),
        "rowwise": seen(F.linear(d(x, Shard(2)), d(w, Shard(1)), d(b, Replicate()))),
        "rows": seen(F.linear(d(x, Shard(0)), d(w, Replicate()))),
        "matmul_contract": seen(d(x, Shard(-1)) @ d(w.t().contiguous(), Shard(0))),
        "bmm_batch": seen(torch.bmm(d(x, Shard(0)), d(x.transpose(1, 2).contiguous(), Shard(0)))),
        "embedding_rows": seen(
            F.embedding(d(torch.tensor(IDX), Replicate()), d(torch.tensor(TABLE), Shard(0)))
        ),
        "embedding_pad": seen(
            F.embedding(d(torch.tensor(IDX), Replicate()), d(torch.tensor(TABLE), Shard(0)), padding_idx=3)
        ),
        "embedding_cols": seen(
            F.embedding(d(torch.tensor(IDX), Replicate()), d(torch.tensor(TABLE), Shard(1)))
        ),
        "sum_sharded": seen(d(x, Shard(1)).sum(1)),
        "sum_all": seen(d(x, Shard(2)).sum()),
        "mean_even": seen(d(x, Shard(0)).mean(0)),
        "mean_uneven": seen(d(x, Shard(1)).mean(1, keepdim=True)),
        "sum_kept": seen(d(x, Shard(2)).sum(0)),
        "view_split": seen(d(x, Shard(2)).view(4, 3, 2, -1)),
        "reshape_merge": seen(d(x, Shard(0)).reshape(-1, 8)),
        "transpose": seen(d(x, Shard(2)).transpose(0, 2)),
        "add_broadcast": seen(d(x, Shard(0)) + d(b[:1].expand(8).contiguous(), Replicate())),
        "relu": seen(torch.relu(d(x, Shard(1)))),
        "softmax": seen(torch.softmax(d(x, Shard(2)), -1)),
        "layer_norm_rows": seen(F.layer_norm(d(x, Shard(1)), (8,), d(w[0].contiguous(), Replicate()))),
    }
    partial = DTensor.from_local(x * (rank + 1), mesh, [Partial()])
    out["partial_plus_replicate"] = seen(partial + d(x, Replicate()))
    out["partial_times_scalar"] = seen(partial * 2.0)
    out["relu_of_partial"] = seen(torch.relu(partial))
    # gradients: a Megatron MLP by hand, column then row parallel, against the whole
    w1, w2 = d(w, Shard(0)).requires_grad_(), d(w.t().contiguous(), Shard(1)).requires_grad_()
    b2 = d(torch.tensor(B[:8].copy() if len(B) >= 8 else np.resize(B, 8)), Replicate()).requires_grad_()
    hidden = torch.relu(F.linear(d(x, Replicate()), w1))
    y = F.linear(hidden, w2, b2)
    (y.full_tensor() ** 2).sum().backward()
    out["grads"] = [
        (g.placements, type(g).__name__, g.full_tensor().numpy()) for g in (w1.grad, w2.grad, b2.grad)
    ]
    out["y"] = y.placements
    try:
        torch.cumsum(d(x, Shard(0)), 0)
    except NotImplementedError as e:
        out["no_rule"] = str(e)
    try:
        d(x, Shard(0)) + x
    except RuntimeError as e:
        out["mixed"] = str(e)
    from disttorch.distributed.tensor.experimental import implicit_replication

    with implicit_replication():
        out["implicit"] = seen(d(x, Shard(0)) + x)
    return out


def test_sharding_propagation_matches_the_whole():
    import disttorch as torch
    import disttorch.nn.functional as F

    x = torch.tensor(X)
    want = {
        "colwise": ("(Shard(dim=2),)", X @ W.T + B),
        "rowwise": ("(Partial(sum),)", X @ W.T + B),
        "rows": ("(Shard(dim=0),)", X @ W.T),
        "matmul_contract": ("(Partial(sum),)", X @ W.T),
        "bmm_batch": ("(Shard(dim=0),)", X @ X.transpose(0, 2, 1)),
        "embedding_rows": ("(Partial(sum),)", TABLE[IDX]),
        "embedding_pad": ("(Partial(sum),)", TABLE[IDX]),
        "embedding_cols": ("(Shard(dim=2),)", TABLE[IDX]),
        "sum_sharded": ("(Partial(sum),)", X.sum(1)),
        "sum_all": ("(Partial(sum),)", X.sum()),
        "mean_even": ("(Partial(avg),)", X.mean(0)),
        "mean_uneven": ("(Replicate(),)", X.mean(1, keepdims=True)),
        "sum_kept": ("(Shard(dim=1),)", X.sum(0)),
        "view_split": ("(Shard(dim=2),)", X.reshape(4, 3, 2, 4)),  # the view takes global sizes
        "reshape_merge": ("(Shard(dim=0),)", X.reshape(-1, 8)),
        "transpose": ("(Shard(dim=0),)", X.transpose(2, 1, 0)),
        "add_broadcast": ("(Shard(dim=0),)", X + B[0]),
        "relu": ("(Shard(dim=1),)", np.maximum(X, 0)),
        "softmax": ("(Replicate(),)", torch.softmax(x, -1).numpy()),
        "layer_norm_rows": ("(Shard(dim=1),)", F.layer_norm(x, (8,), torch.tensor(W[0])).numpy()),
        "partial_plus_replicate": ("(Partial(sum),)", X * 3 + X),
        "partial_times_scalar": ("(Partial(sum),)", X * 6),
        "relu_of_partial": ("(Replicate(),)", np.maximum(X * 3, 0)),
        "implicit": ("(Shard(dim=0),)", X * 2),
    }
    # the whole MLP on one process
    w1 = torch.tensor(W, requires_grad=True)
    w2 = torch.tensor(W.T.copy(), requires_grad=True)
    b2 = torch.tensor(np.resize(B, 8), requires_grad=True)
    (F.linear(torch.relu(F.linear(x, w1)), w2, b2) ** 2).sum().backward()
    for out in run_ranks(_ops, 2, timeout=120):
        for key, (placements, whole) in want.items():
            got_placements, shape, full = out[key]
            assert repr(got_placements) == placements, key
            assert shape == whole.shape, key
            np.testing.assert_allclose(full, whole, rtol=1e-12, atol=1e-12, err_msg=key)
        assert repr(out["y"]) == "(Partial(sum),)"
        for (placements, kind, grad), p, want_p in zip(
            out["grads"], (w1, w2, b2), ("Shard(dim=0)", "Shard(dim=1)", "Replicate()")
        ):
            assert kind == "DTensor" and repr(placements) == f"({want_p},)"
            np.testing.assert_allclose(grad, p.grad.numpy(), rtol=1e-12)
        assert "Cumsum" in out["no_rule"] and "Shard(dim=0)" in out["no_rule"]
        assert "mixed torch.Tensor and DTensor" in out["mixed"]


def _optimizers(rank: int, world: int, foreach: bool, kind: str) -> list:
    import disttorch as torch
    from disttorch.distributed.device_mesh import init_device_mesh
    from disttorch.distributed.tensor import Replicate, Shard, distribute_tensor

    mesh = init_device_mesh("cpu", (world,))
    params = [
        torch.nn.Parameter(distribute_tensor(torch.tensor(W), mesh, [Shard(0)])),
        torch.nn.Parameter(distribute_tensor(torch.tensor(B), mesh, [Replicate()])),
    ]
    opt = (
        torch.optim.AdamW(params, lr=0.1, foreach=foreach)
        if kind == "adamw"
        else torch.optim.SGD(params, lr=0.1, momentum=0.9, foreach=foreach)
    )
    for step in range(3):
        opt.zero_grad()
        loss = (params[0] * (step + 1.0)).sum() + (params[1] ** 2).sum()
        loss.full_tensor().backward()
        opt.step()
    return [(type(p).__name__, p.placements, p.full_tensor().detach().numpy()) for p in params]


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("kind", ["adamw", "sgd"])
def test_optimisers_update_dtensor_parameters_as_the_whole(foreach, kind):
    import disttorch as torch

    params = [torch.nn.Parameter(torch.tensor(W)), torch.nn.Parameter(torch.tensor(B))]
    opt = (
        torch.optim.AdamW(params, lr=0.1, foreach=foreach)
        if kind == "adamw"
        else torch.optim.SGD(params, lr=0.1, momentum=0.9, foreach=foreach)
    )
    for step in range(3):
        opt.zero_grad()
        ((params[0] * (step + 1.0)).sum() + (params[1] ** 2).sum()).backward()
        opt.step()
    for out in run_ranks(_optimizers, 2, args=(foreach, kind), timeout=120):
        for (kind_name, placements, value), p, want in zip(
            out, params, ("(Shard(dim=0),)", "(Replicate(),)")
        ):
            assert kind_name == "DTensor" and repr(placements) == want
            np.testing.assert_allclose(value, p.detach().numpy(), rtol=1e-12)
