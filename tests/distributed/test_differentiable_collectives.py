"""``torch.distributed.nn.functional``: every differentiable collective's gradients are those
of the same computation done in one process over all ranks' tensors (each rank's loss is its
own; the collectives' backwards add up what the other ranks' losses owe this rank's input)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dist_helpers import run_ranks

WORLD = 3
CASES = [
    "all_gather",
    "all_reduce",
    "broadcast",
    "reduce",
    "gather",
    "scatter",
    "all_to_all",
    "all_to_all_single",
    "reduce_scatter",
]


def _inputs(rank: int):
    return np.random.default_rng(rank).standard_normal((2, 3))


def _loss(outs, rank: int):
    """Each rank's loss weighs each output differently, so every gradient path shows."""
    return sum(((o * (i + 1 + rank)) ** 2).sum() for i, o in enumerate(outs))


def _forward(case: str, x, rank: int, world: int, lib):
    """The collective under test, called as a training script calls it."""
    import disttorch.distributed.nn as dnn

    f64 = lib.float64
    if case == "all_gather":
        return dnn.all_gather(x)
    if case == "all_reduce":
        return (dnn.all_reduce(x),)
    if case == "broadcast":
        return (dnn.broadcast(x, 1),)
    if case == "reduce":
        return (dnn.reduce(x, 0),) if rank == 0 else (dnn.reduce(x, 0) * 0,)
    if case == "gather":
        outs = dnn.gather(x, 2)
        return outs if rank == 2 else tuple(o * 0 for o in outs)
    if case == "scatter":
        return (dnn.scatter([x * (i + 1) for i in range(world)], 0),)
    if case == "all_to_all":
        outs = [lib.empty(2, 3, dtype=f64) for _ in range(world)]
        return dnn.all_to_all(outs, [x * (i + 2) for i in range(world)])
    if case == "all_to_all_single":
        return (
            dnn.all_to_all_single(
                lib.empty(2 * world, 3, dtype=f64), lib.cat([x * (i + 1) for i in range(world)])
            ),
        )
    if case == "reduce_scatter":
        return (dnn.reduce_scatter(lib.empty(2, 3, dtype=f64), [x * (i + 1) for i in range(world)]),)
    raise AssertionError(case)


def _one_process(case: str, xs, world: int):
    """What the ranks' outputs are as functions of all ranks' inputs, in one graph."""
    import disttorch as dt

    def scaled(r):
        return [xs[r] * (i + 1) for i in range(world)]

    outs = []
    for rank in range(world):
        if case == "all_gather":
            outs.append(tuple(xs))
        elif case == "all_reduce":
            outs.append((sum(xs[1:], xs[0]),))
        elif case == "broadcast":
            outs.append((xs[1],))
        elif case == "reduce":
            outs.append((sum(xs[1:], xs[0]),) if rank == 0 else (xs[rank] * 0,))
        elif case == "gather":
            outs.append(tuple(xs) if rank == 2 else tuple(x * 0 for x in xs))
        elif case == "scatter":
            outs.append((scaled(0)[rank],))
        elif case == "all_to_all":
            outs.append(tuple(xs[src] * (rank + 2) for src in range(world)))
        elif case == "all_to_all_single":
            outs.append((dt.cat([scaled(src)[rank] for src in range(world)]),))
        elif case == "reduce_scatter":
            pieces = [scaled(src)[rank] for src in range(world)]
            outs.append((sum(pieces[1:], pieces[0]),))
    return sum(_loss(o, rank) for rank, o in enumerate(outs))


def _ranks_grads(rank, world_size):
    import disttorch as dt
    import disttorch.distributed as dist

    warnings.simplefilter("ignore", FutureWarning)
    dist.init_process_group("gloo")
    grads = {}
    for case in CASES:
        x = dt.tensor(_inputs(rank), requires_grad=True)
        _loss(_forward(case, x, rank, world_size, dt), rank).backward()
        grads[case] = x.grad.numpy()
    out = dt.empty(2 * world_size, 3, dtype=dt.float64)
    x = dt.tensor(_inputs(rank), requires_grad=True)
    try:
        dist.nn.functional._all_gather_base(out, x).sum().backward()
    except RuntimeError as e:
        grads["_all_gather_base"] = str(e)
    grads["gathered"] = out.numpy()
    dist.destroy_process_group()
    return grads


@pytest.mark.timeout(120)
def test_each_collectives_gradient_is_the_one_process_gradient():
    import disttorch as dt

    results = run_ranks(_ranks_grads, WORLD, timeout=100)
    for case in CASES:
        xs = [dt.tensor(_inputs(r), requires_grad=True) for r in range(WORLD)]
        _one_process(case, xs, WORLD).backward()
        for rank in range(WORLD):
            np.testing.assert_allclose(
                results[rank][case],
                np.zeros((2, 3)) if xs[rank].grad is None else xs[rank].grad.numpy(),
                rtol=1e-12,
                err_msg=f"{case} rank {rank}",
            )
    for rank in range(WORLD):
        assert results[rank]["_all_gather_base"] == "Backend not supported!"
        np.testing.assert_array_equal(
            results[rank]["gathered"], np.concatenate([_inputs(r) for r in range(WORLD)])
        )


def test_the_names_pytorch_gives_and_its_deprecation_warnings():
    import disttorch as dt
    import disttorch.distributed.nn as dnn
    from disttorch.distributed.nn import functional

    assert dnn.all_gather is functional.all_gather and dnn.all_reduce is functional.all_reduce
    with pytest.warns(
        FutureWarning,
        match="all_gather is deprecated, use torch.distributed._functional_collectives.all_gather_single",
    ):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            dnn.all_gather(dt.zeros(1))  # no process group: the warning comes first, as in PyTorch
