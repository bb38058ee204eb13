"""DDP broadcasts module buffers before a forward only when the previous forward ran with
gradients enabled and gradient sync on (PyTorch's ``require_forward_param_sync``): a no-grad
evaluation on one rank alone, between training steps, leaves the ranks in step."""

from __future__ import annotations

import numpy as np
import pytest

from dist_helpers import run_ranks


def _model(nn):
    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Tanh(), nn.Linear(8, 2))


def eval_on_rank_zero_only(rank: int, world: int) -> dict:
    import disttorch as torch
    import disttorch.distributed as dist
    from disttorch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group()
    torch.manual_seed(0)
    ddp = DDP(_model(torch.nn))
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(rank)
    for step in range(4):
        x, y = torch.randn(6, 4, generator=g), torch.randn(6, 2, generator=g)
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if rank == 0:  # evaluate and log on the main rank only
            ddp.eval()
            with torch.no_grad():
                for _ in range(step % 3):  # none, one or two evaluation forwards
                    ddp(torch.randn(3, 4, generator=g))
            ddp.train()
            if step == 2:  # a no-grad forward in training mode too (running stats move)
                with torch.no_grad():
                    ddp(torch.randn(3, 4, generator=g))
    state = [p.detach().numpy().copy() for p in ddp.parameters()]  # (buffers are per rank after a forward)
    everyone = [None] * world
    dist.all_gather_object(everyone, state)
    dist.destroy_process_group()
    return {"same": all(np.array_equal(a, b) for s in everyone for a, b in zip(s, everyone[0]))}


@pytest.mark.timeout(90)
def test_no_grad_evaluation_on_one_rank_between_steps_keeps_the_ranks_in_step():
    for r in run_ranks(eval_on_rank_zero_only, 2, timeout=80, env={"DISTTORCH_TIMEOUT": "30"}):
        assert r["same"], "parameters differ between the ranks"


def sync_flags(rank: int, world: int, lib: str) -> list:
    """``require_forward_param_sync`` after each kind of forward, in ``lib``."""
    if lib == "torch":
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("gloo")
    else:
        import disttorch as torch
        import disttorch.distributed as dist
        from disttorch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group()
    ddp = DDP(_model(torch.nn))
    x = torch.randn(3, 4)
    flags = [ddp.require_forward_param_sync]
    ddp(x).sum().backward()
    flags.append(ddp.require_forward_param_sync)
    with torch.no_grad():
        ddp(x)
    flags.append(ddp.require_forward_param_sync)
    with ddp.no_sync():
        ddp(x).sum().backward()
    flags.append(ddp.require_forward_param_sync)
    ddp(x).sum().backward()
    flags.append(ddp.require_forward_param_sync)
    dist.destroy_process_group()
    return flags


@pytest.mark.parity
@pytest.mark.timeout(120)
def test_forward_sync_flag_follows_pytorch(torch):
    want = run_ranks(sync_flags, 1, args=("torch",), timeout=100)[0]
    got = run_ranks(sync_flags, 1, args=("disttorch",), timeout=60)[0]
    assert want == [True, True, False, False, True]
    assert got == want
