"""``ShardedGradScaler``: an inf/NaN gradient on one rank makes every rank skip the step."""

from __future__ import annotations

import pytest

import disttorch as dt
from disttorch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

from dist_helpers import run_ranks


def _scaled_step(rank: int, world_size: int) -> tuple:
    import disttorch as dt
    import disttorch.distributed as dist
    from disttorch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

    dist.init_process_group("gloo")
    w = dt.nn.Parameter(dt.ones(2, dtype=dt.float16))
    opt = dt.optim.SGD([w], lr=1.0)
    scaler = ShardedGradScaler("cpu", init_scale=4.0)
    steps = []
    for bad in (False, True):
        opt.zero_grad()
        loss = (w.float() * (float("inf") if bad and rank == 1 else 1.0)).sum()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        steps.append(w.detach().float().tolist())
    dist.destroy_process_group()
    return steps, scaler.get_scale()


def test_a_bad_gradient_on_one_rank_skips_the_step_everywhere():
    for steps, scale in run_ranks(_scaled_step, 2, timeout=60):
        assert steps == [[0.0, 0.0], [0.0, 0.0]] and scale == 2.0


def test_alone_it_is_a_grad_scaler_with_pytorch_argument_order():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        scaler = ShardedGradScaler("cuda")
    assert not scaler.is_enabled() and scaler.process_group is None
    assert ShardedGradScaler("cpu", 8.0, 0.25, 4.0).get_backoff_factor() == 0.25


@pytest.mark.parity
def test_signature_as_pytorch(torch):
    import inspect

    from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler as Theirs

    assert list(inspect.signature(Theirs).parameters) == list(inspect.signature(ShardedGradScaler).parameters)
    with pytest.warns(UserWarning):
        assert not Theirs("cuda").is_enabled()
    assert dt.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler is ShardedGradScaler
