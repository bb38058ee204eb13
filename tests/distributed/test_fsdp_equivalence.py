"""fully_shard on real processes: N ranks give the parameters of one process trained on the
combined batch and of DDP (float64), for an MLP, the benchmark CNN and GPT, and a model with tied
weights; the optimiser holds only the local shards."""

from __future__ import annotations

import numpy as np
import pytest
from fsdp_models import BATCH, build, data, full_params, train, units

from dist_helpers import run_ranks


def _fsdp_worker(rank: int, world: int, kind: str, reshard: bool) -> tuple:
    import disttorch.distributed as dist
    from disttorch.distributed.fsdp import fully_shard

    dist.init_process_group()
    model = build(kind)
    total = sum(p.numel() for p in model.parameters())
    for m in units(model, kind):
        fully_shard(m, reshard_after_forward=reshard)
    fully_shard(model)
    local = sum(p.to_local().numel() for p in model.parameters())  # the shards (shape is global)
    x, y = data(kind, world)
    sl = slice(rank * BATCH, (rank + 1) * BATCH)
    train(model, kind, x[:, sl], y[:, sl])
    params = full_params(model)
    ddp = None
    if kind in ("mlp", "tied"):  # and DDP on the same slices
        from disttorch.nn.parallel import DistributedDataParallel

        replica = build(kind)
        train(DistributedDataParallel(replica), kind, x[:, sl], y[:, sl])
        ddp = full_params(replica)
    dist.destroy_process_group()
    return params, local, total, ddp


def _reference(kind: str, world: int) -> dict:
    model = build(kind)
    x, y = data(kind, world)
    train(model, kind, x, y)
    return full_params(model)


@pytest.mark.parametrize(
    "kind,world,reshard",
    [
        ("mlp", 2, True),
        ("mlp", 3, False),
        ("cnn", 2, True),
        ("gpt", 2, True),
        ("gpt-ckpt", 2, True),
        ("tied", 2, True),
    ],
)
def test_fully_shard_matches_one_process(kind, world, reshard):
    expected = _reference(kind, world)
    results = run_ranks(_fsdp_worker, world, args=(kind, reshard), timeout=120)
    for params, local, total, ddp in results:
        assert params.keys() == expected.keys()
        for name in expected:
            np.testing.assert_allclose(params[name], expected[name], rtol=1e-9, atol=1e-11, err_msg=name)
            if ddp is not None:
                np.testing.assert_allclose(params[name], ddp[name], rtol=1e-9, atol=1e-11, err_msg=name)
        assert local <= total / world + 64  # each rank keeps about 1/N (plus the rows of padding)
    assert sum(r[1] for r in results) == results[0][2]
