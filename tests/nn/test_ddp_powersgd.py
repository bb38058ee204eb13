"""PowerSGD gradient compression (``ddp_comm_hooks.powerSGD_hook``) on real processes: the
gradients it hands back are low-rank, its statistics and iteration count are PyTorch's, and a
DDP run with the hook gives PyTorch's losses (recorded from PyTorch 2.13 running the same
function with ``lib="torch"``)."""

import numpy as np
import pytest

from dist_helpers import run_ranks

# (hook settings, steps): rank 1 (Gram-Schmidt) with warm start and error feedback; rank 3
# (QR) batching same-shaped gradients, fresh random Qs every step, no error feedback
CONFIGS = [
    {"matrix_approximation_rank": 1, "start_powerSGD_iter": 2},
    {
        "matrix_approximation_rank": 3,
        "start_powerSGD_iter": 2,
        "warm_start": False,
        "use_error_feedback": False,
        "batch_tensors_with_same_shape": True,
        "orthogonalization_epsilon": 1e-8,
        "random_seed": 7,
    },
]
STEPS = 5


def powersgd_run(rank: int, world: int, lib: str) -> list[dict]:
    """Train a small MLP with each of CONFIGS; per config the losses, the last gradients of the
    hidden matrices, the compression statistics and the state's iteration count."""
    if lib == "torch":
        import torch
        import torch.distributed as dist
        from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as powersgd
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("gloo")
    else:
        import disttorch as torch
        import disttorch.distributed as dist
        from disttorch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as powersgd
        from disttorch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group()
    nn = torch.nn
    out = []
    for config in CONFIGS:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 24), nn.ReLU(), nn.Linear(24, 24))
        ddp = DDP(model)
        state = powersgd.PowerSGDState(None, **config)
        ddp.register_comm_hook(state, powersgd.powerSGD_hook)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
        g = torch.Generator().manual_seed(1 + rank)
        losses = []
        for _ in range(STEPS):
            x, y = torch.randn(8, 12, generator=g), torch.randint(0, 24, (8,), generator=g)
            loss = nn.functional.cross_entropy(ddp(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        grads = [model[i].weight.grad.numpy().copy() for i in (2, 4)]
        out.append({"losses": losses, "grads": grads, "stats": state.compression_stats(), "iter": state.iter})
    dist.destroy_process_group()
    return out


@pytest.fixture(scope="module")
def disttorch_runs():
    return run_ranks(powersgd_run, 2, args=("disttorch",), timeout=60)


@pytest.mark.timeout(90)
def test_powersgd_hands_back_the_same_low_rank_gradients_on_every_rank(disttorch_runs):
    rank0, rank1 = disttorch_runs
    for config, a, b in zip(CONFIGS, rank0, rank1):
        assert a["iter"] == b["iter"] == STEPS
        # the weights (24x12, 24x24, 24x24) compressed to (n + m) * rank elements, the biases
        # sent whole, in each of the steps after the first two
        r = config["matrix_approximation_rank"]
        compressed = STEPS - config["start_powerSGD_iter"]
        before, after = compressed * (288 + 2 * 576 + 3 * 24), compressed * ((36 + 2 * 48) * r + 3 * 24)
        assert a["stats"] == b["stats"] == (before / after, before, after)
        for ga, gb in zip(a["grads"], b["grads"]):
            np.testing.assert_array_equal(ga, gb)
            assert np.linalg.matrix_rank(ga.astype(np.float64), tol=1e-5 * np.abs(ga).max()) == r


# PyTorch 2.13 CPU's run of powersgd_run(rank, 2, "torch"): each rank's losses per config, and
# the summed magnitude of the last gradient of the first hidden matrix (the same on both ranks)
PYTORCH_LOSSES = [
    [[3.228893, 3.183298, 3.098974, 3.193485, 3.235018], [3.228893, 3.183298, 3.098974, 3.192832, 3.232851]],
    [[3.190923, 3.244237, 3.172189, 3.158901, 3.200146], [3.190923, 3.244237, 3.172189, 3.158798, 3.200709]],
]
PYTORCH_GRAD_ABS_SUMS = [2.21193, 3.012]


def test_powersgd_training_gives_pytorchs_losses_and_gradients(disttorch_runs):
    for got_rank, want_losses in zip(disttorch_runs, PYTORCH_LOSSES):
        for got, want, grad_sum in zip(got_rank, want_losses, PYTORCH_GRAD_ABS_SUMS):
            np.testing.assert_allclose(got["losses"], want, rtol=1e-6)
            np.testing.assert_allclose(np.abs(got["grads"][0]).sum(), grad_sum, rtol=1e-5)
