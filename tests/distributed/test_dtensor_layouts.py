"""DTensor layouts on real processes: ``Shard(d)`` for any dim (negative, uneven),
``Replicate()``, ``Partial()``; ``distribute_tensor``, ``from_local``/``to_local``,
``full_tensor`` and ``redistribute`` between every pair of layouts, on 1-D and 2-D meshes,
and their gradients (the transposed collective, as in PyTorch)."""

from __future__ import annotations

import numpy as np
import pytest

from dist_helpers import run_ranks

WHOLE = np.arange(35.0).reshape(5, 7) / 7  # uneven over 2 and 4 ranks along both dims
COLUMNS = np.arange(28.0).reshape(7, 4) / 10


def _chunk(a: np.ndarray, dim: int, n: int, i: int) -> np.ndarray:
    """torch.chunk's piece ``i`` of ``n`` along ``dim`` (empty past the last)."""
    step = -(-a.shape[dim] // n)
    return np.take(a, np.arange(min(i * step, a.shape[dim]), min((i + 1) * step, a.shape[dim])), axis=dim)


def _layouts_1d(rank: int, world: int) -> dict:
    import disttorch as torch
    from disttorch.distributed.device_mesh import init_device_mesh
    from disttorch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

    mesh = init_device_mesh("cpu", (world,))
    whole = torch.tensor(WHOLE)
    out: dict = {"local": {}, "moves": {}}
    for p in (Shard(0), Shard(1), Shard(-1), Replicate()):
        d = distribute_tensor(whole, mesh, [p])
        out["local"][repr(p)] = (d.to_local().numpy().copy(), d.placements, d.global_shape)
    # every rank's summand: rank r holds (r + 1) * WHOLE / 10, the sum is WHOLE * sum(r+1) / 10
    summand = DTensor.from_local(torch.tensor(WHOLE * (rank + 1) / 10), mesh, [Partial()])
    layouts = [Shard(0), Shard(1), Replicate()]
    for src in layouts + [Partial()]:
        for dst in layouts:
            start = summand if src == Partial() else distribute_tensor(whole, mesh, [src])
            moved = start.redistribute(mesh, [dst])
            out["moves"][(repr(src), repr(dst))] = (
                moved.to_local().numpy().copy(),
                moved.full_tensor().numpy(),
            )
    out["partial_avg"] = (
        DTensor.from_local(torch.tensor(WHOLE * rank), mesh, [Partial("avg")]).full_tensor().numpy()
    )
    return out


def test_shard_replicate_partial_and_every_move_on_a_1d_mesh():
    world = 4
    total = sum(r + 1 for r in range(world)) / 10
    for rank, out in enumerate(run_ranks(_layouts_1d, world, timeout=120)):
        for name, dim in (("Shard(dim=0)", 0), ("Shard(dim=1)", 1)):
            local, placements, shape = out["local"][name]
            np.testing.assert_array_equal(local, _chunk(WHOLE, dim, world, rank))
            assert shape == (5, 7) and placements[0].dim == dim
        assert out["local"]["Shard(dim=1)"][1] == out["local"]["Shard(dim=-1)"][1]  # -1 means 1
        np.testing.assert_array_equal(out["local"]["Replicate()"][0], WHOLE)
        for (src, dst), (local, full) in out["moves"].items():
            expected = WHOLE * total if src == "Partial(sum)" else WHOLE
            np.testing.assert_allclose(full, expected, rtol=1e-12, err_msg=f"{src} -> {dst}")
            piece = expected if dst == "Replicate()" else _chunk(expected, int(dst[-2]), world, rank)
            np.testing.assert_allclose(local, piece, rtol=1e-12, err_msg=f"{src} -> {dst}")
        np.testing.assert_allclose(out["partial_avg"], WHOLE * 1.5)


def _layouts_2d(rank: int, world: int) -> dict:
    import disttorch as torch
    from disttorch.distributed.device_mesh import init_device_mesh
    from disttorch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    whole = torch.tensor(WHOLE)
    layouts = [
        (Shard(0), Shard(0)),
        (Shard(0), Shard(1)),
        (Shard(1), Shard(0)),
        (Replicate(), Shard(1)),
        (Shard(1), Replicate()),
        (Replicate(), Replicate()),
    ]
    out: dict = {"local": {}, "full": {}}
    for src in layouts:
        d = distribute_tensor(whole, mesh, src)
        out["local"][repr(src)] = d.to_local().numpy().copy()
        for dst in layouts:
            out["full"][(repr(src), repr(dst))] = d.redistribute(mesh, dst).full_tensor().numpy()
    summand = DTensor.from_local(
        torch.tensor(WHOLE * (rank + 1)), mesh, [Partial(), Shard(1)], shape=(5, 7 * 2), stride=(14, 1)
    )
    # dp's partial reduced into a shard along dim 1 while tp also shards dim 1: all-reduce, then nested cut
    nested = DTensor.from_local(torch.tensor(WHOLE * (rank + 1)), mesh, [Partial(), Replicate()])
    out["partial_to_nested"] = nested.redistribute(mesh, [Shard(1), Shard(1)]).to_local().numpy().copy()
    out["partial_shard"] = summand.redistribute(mesh, [Replicate(), Replicate()]).to_local().numpy().copy()
    out["sub_tp"] = distribute_tensor(whole, mesh["tp"], [Shard(0)]).to_local().numpy().copy()
    out["repr"] = (repr(mesh), repr(mesh["tp"]), repr(mesh["dp"]))
    return out


def test_nested_and_2d_layouts_move_between_each_other():
    outs = run_ranks(_layouts_2d, 4, timeout=120)
    for rank, out in enumerate(outs):
        dp, tp = divmod(rank, 2)
        np.testing.assert_array_equal(
            out["local"]["(Shard(dim=0), Shard(dim=0))"], _chunk(_chunk(WHOLE, 0, 2, dp), 0, 2, tp)
        )
        np.testing.assert_array_equal(
            out["local"]["(Shard(dim=1), Shard(dim=0))"], _chunk(_chunk(WHOLE, 1, 2, dp), 0, 2, tp)
        )
        np.testing.assert_array_equal(out["local"]["(Replicate(), Shard(dim=1))"], _chunk(WHOLE, 1, 2, tp))
        for key, full in out["full"].items():
            np.testing.assert_array_equal(full, WHOLE, err_msg=str(key))
        sums = [WHOLE * (r + 1) for r in range(4)]
        dp_sum = sums[tp] + sums[2 + tp]  # the partial is summed along dp (ranks tp and 2 + tp)
        np.testing.assert_allclose(out["partial_to_nested"], _chunk(_chunk(dp_sum, 1, 2, dp), 1, 2, tp))
        whole_rows = np.concatenate([sums[0] + sums[2], sums[1] + sums[3]], axis=1)
        np.testing.assert_allclose(out["partial_shard"], whole_rows)
        np.testing.assert_array_equal(out["sub_tp"], _chunk(WHOLE, 0, 2, tp))
        assert out["repr"] == (  # PyTorch's form
            "DeviceMesh((dp=2, tp=2), 'cpu', stride=(2, 1))",
            "DeviceMesh((tp=2), 'cpu', stride=(1,))",
            "DeviceMesh((dp=2), 'cpu', stride=(2,))",
        )


def _gradients(rank: int, world: int) -> dict:
    import disttorch as torch
    from disttorch.distributed.device_mesh import init_device_mesh
    from disttorch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

    mesh = init_device_mesh("cpu", (world,))
    weights = torch.tensor(WHOLE * 3 + 1)
    out = {}
    # Shard(0) -> Replicate: the gradient comes back as this rank's chunk (Replicate -> Shard)
    x = distribute_tensor(torch.tensor(WHOLE), mesh, [Shard(0)]).requires_grad_()
    (x.redistribute(mesh, [Replicate()]).to_local() * weights).sum().backward()
    out["shard_to_replicate"] = (type(x.grad).__name__, x.grad.placements, x.grad.to_local().numpy().copy())
    # Replicate -> Shard(1): every rank's gradient of its piece is gathered (Shard -> Replicate)
    x = distribute_tensor(torch.tensor(WHOLE), mesh, [Replicate()]).requires_grad_()
    piece = x.redistribute(mesh, [Shard(1)]).to_local()
    (piece * (rank + 1)).sum().backward()
    out["replicate_to_shard"] = x.grad.to_local().numpy().copy()
    # Partial -> Replicate: the gradient is the output's, unchanged on every rank
    local = torch.tensor(WHOLE * (rank + 1), requires_grad=True)
    p = DTensor.from_local(local, mesh, [Partial()])
    (p.full_tensor() * weights).sum().backward()
    out["partial_to_replicate"] = local.grad.numpy().copy()
    # to_local(grad_placements=[Partial()]): each rank's gradient is a summand, reduced into the Replicate
    x = distribute_tensor(torch.tensor(WHOLE), mesh, [Replicate()]).requires_grad_()
    (x.to_local(grad_placements=[Partial()]) * (rank + 1)).sum().backward()
    out["grad_placements"] = x.grad.to_local().numpy().copy()
    # summands of a replicated tensor's gradient (its sharded uses) meet a whole one (a
    # replicated use): added as summands and reduced once, where the layout asks (here a
    # reduce-scatter back to x's shards); a parameter's gradient stays Partial (PyTorch's)
    x = distribute_tensor(torch.tensor(WHOLE), mesh, [Shard(0)]).requires_grad_()
    w = distribute_tensor(torch.tensor(COLUMNS), mesh, [Shard(1)]).requires_grad_()
    b, b_alone = (
        distribute_tensor(torch.tensor(WHOLE[0]), mesh, [Replicate()]).requires_grad_() for _ in "ab"
    )
    xr = x.redistribute(mesh, [Replicate()])
    loss = (xr @ w).to_local().sum() + (xr * xr).to_local().sum()
    loss = loss + (x + b).to_local().sum() + (b * b).to_local().sum() + (x * b_alone).to_local().sum()
    loss.backward()
    out["summands"] = {
        name: (t.grad.placements, t.grad.full_tensor().numpy().copy()) for name, t in (("x", x), ("b", b))
    }
    out["summands"]["b_alone"] = (b_alone.grad.placements, b_alone.grad.full_tensor().numpy().copy())
    # from_local: run_check makes the replicas agree, shape without stride is an error
    mine = torch.full((2,), float(rank))
    out["run_check"] = DTensor.from_local(mine, mesh, [Replicate()], run_check=True).to_local().numpy().copy()
    try:
        DTensor.from_local(mine, mesh, [Replicate()], shape=(2,))
    except RuntimeError as e:
        out["shape_error"] = str(e)
    try:
        distribute_tensor(torch.tensor(WHOLE), mesh, [Shard(2)])
    except IndexError as e:
        out["dim_error"] = str(e)
    return out


def test_redistribute_and_local_views_are_differentiable():
    world = 2
    weights = WHOLE * 3 + 1
    for rank, out in enumerate(run_ranks(_gradients, world, timeout=120)):
        kind, placements, grad = out["shard_to_replicate"]
        assert kind == "DTensor" and repr(placements) == "(Shard(dim=0),)"
        np.testing.assert_array_equal(grad, _chunk(weights, 0, world, rank))
        expected = np.concatenate(
            [np.full(_chunk(WHOLE, 1, world, r).shape, r + 1.0) for r in range(world)], axis=1
        )
        np.testing.assert_array_equal(out["replicate_to_shard"], expected)
        np.testing.assert_array_equal(out["partial_to_replicate"], weights)
        np.testing.assert_array_equal(
            out["grad_placements"], np.full(WHOLE.shape, sum(range(1, world + 1)), float)
        )
        layouts = {k: repr(v[0]) for k, v in out["summands"].items()}
        assert layouts == {"x": "(Shard(dim=0),)", "b": "(Partial(sum),)", "b_alone": "(Partial(sum),)"}
        x_grad = COLUMNS.sum(1) + 2 * WHOLE + 1 + WHOLE[0]
        np.testing.assert_allclose(out["summands"]["x"][1], x_grad)
        np.testing.assert_allclose(out["summands"]["b"][1], len(WHOLE) + 2 * WHOLE[0])
        np.testing.assert_allclose(out["summands"]["b_alone"][1], WHOLE.sum(0))
        np.testing.assert_array_equal(out["run_check"], [0.0, 0.0])
        assert "pass both shape and stride" in out["shape_error"]
        assert "Shard(dim=2) is out of range" in out["dim_error"]


@pytest.mark.parametrize("reduce_op", ["product", "bxor"])
def test_replicate_to_partial_refuses_ops_without_an_inverse(reduce_op):
    from disttorch.distributed.tensor._redistribute import _partition
    from disttorch.distributed.tensor.placement_types import Partial

    with pytest.raises(ValueError, match="not supported"):
        _partition(WHOLE, Partial(reduce_op), 2)


def _finite_differences(torch, fn, x, rank: int, world: int) -> bool:
    """float64 check of ``fn``'s distributed gradient: ``fn`` maps each rank's piece ``x``
    to a replicated output; the gradient of ``sum(fn(x) * g)`` on every rank must equal
    central differences taken by perturbing one element of one rank's piece at a time
    (the others hold theirs, so every rank calls ``fn`` as often, in lockstep)."""
    g = torch.tensor(np.random.default_rng(7).standard_normal(tuple(fn(x.detach()).shape)))
    x = x.detach().requires_grad_()
    (fn(x) * g).sum().backward()
    numeric = np.zeros(x.numel())
    eps = 1e-6
    for r in range(world):
        for j in range(x.numel()):
            values = []
            for step in (eps, -eps):
                moved = x.detach().clone()
                if rank == r:
                    moved.view(-1)[j] += step
                values.append(float((fn(moved) * g).sum()))
            if rank == r:
                numeric[j] = (values[0] - values[1]) / (2 * eps)
    return bool(np.allclose(x.grad.numpy().reshape(-1), numeric, rtol=1e-5, atol=1e-7))


def _gradchecks(rank: int, world: int) -> dict:
    """Finite-difference checks of the moves whose output is replicated and of the
    parallel cross-entropy, on every rank's piece."""
    import disttorch as torch
    from disttorch.distributed.device_mesh import init_device_mesh
    from disttorch.distributed.tensor import DTensor, Partial, Replicate, Shard
    from disttorch.distributed.tensor._ops._loss import ParallelCrossEntropy

    mesh = init_device_mesh("cpu", (world,))
    rng = np.random.default_rng(rank)
    shape = (3, 2 * world)
    start = 2 * rank
    piece = torch.tensor(rng.standard_normal((3, 2)))
    out = {}
    for name, placement, size in (("shard", Shard(1), shape), ("partial", Partial(), (3, 2))):

        def whole(x, placement=placement, size=size):
            d = DTensor.from_local(x, mesh, [placement], shape=size, stride=(size[1], 1))
            return d.redistribute(mesh, [Replicate()]).to_local()

        out[name] = _finite_differences(torch, whole, piece, rank, world)
    target = torch.tensor([0, shape[1] - 1, 3])
    group = mesh.get_group(0)
    for reduction in ("mean", "sum", "none"):

        def loss(x, reduction=reduction):
            return ParallelCrossEntropy.apply(x, target, start, group, -100, reduction)

        out[f"ce_{reduction}"] = _finite_differences(torch, loss, piece, rank, world)
    return out


def test_replicated_moves_and_parallel_cross_entropy_match_finite_differences():
    for out in run_ranks(_gradchecks, 2, timeout=120):
        assert all(out.values()), out
