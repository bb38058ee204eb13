"""Post-local SGD and model averaging on real processes: ``post_localSGD_hook`` all-reduces
gradients for ``start_localSGD_iter`` steps and then only within its subgroup (or not at all),
``PeriodicModelAverager``, ``HierarchicalModelAverager`` and ``PostLocalSGDOptimizer`` average
the parameters every ``period`` steps, and a training run gives PyTorch's losses (recorded from
PyTorch 2.13 running the same function with ``lib="torch"``)."""

from collections import OrderedDict

import numpy as np
import pytest

from dist_helpers import run_ranks

STEPS = 6


def post_local_sgd_run(rank: int, world: int, lib: str) -> dict:
    """Train a small MLP three ways (hook + periodic averager; hook without local all-reduce +
    ``PostLocalSGDOptimizer``; hook + hierarchical averager); per way each step's loss and the
    parameters' sum at the end; and the optimiser's state-dict round trip."""
    if lib == "torch":
        import torch
        import torch.distributed as dist
        from torch.distributed.algorithms.ddp_comm_hooks import post_localSGD_hook as plsgd
        from torch.distributed.algorithms.model_averaging import averagers, hierarchical_model_averager, utils
        from torch.distributed.optim import PostLocalSGDOptimizer
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("gloo")
    else:
        import disttorch as torch
        import disttorch.distributed as dist
        from disttorch.distributed.algorithms.ddp_comm_hooks import post_localSGD_hook as plsgd
        from disttorch.distributed.algorithms.model_averaging import (
            averagers,
            hierarchical_model_averager,
            utils,
        )
        from disttorch.distributed.optim import PostLocalSGDOptimizer
        from disttorch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group()
    nn = torch.nn
    solo, _ = dist.new_subgroups(group_size=1)
    out: dict = {}

    def train(name, state, make_opt, averager=None):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
        ddp = DDP(model)
        ddp.register_comm_hook(state, plsgd.post_localSGD_hook)
        opt = make_opt(ddp.parameters())
        g = torch.Generator().manual_seed(1 + rank)
        losses = []
        for _ in range(STEPS):
            x, y = torch.randn(8, 6, generator=g), torch.randint(0, 3, (8,), generator=g)
            loss = nn.functional.cross_entropy(ddp(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if averager is not None:
                averager.average_parameters(ddp.parameters())
            losses.append(loss.item())
        out[name] = {
            "losses": losses,
            "params": [float(p.detach().double().sum()) for p in model.parameters()],
            "iter": state.iter,
        }
        return opt

    state = plsgd.PostLocalSGDState(None, solo, start_localSGD_iter=2)
    averager = averagers.PeriodicModelAverager(period=2, warmup_steps=2)
    train("periodic", state, lambda ps: torch.optim.SGD(ps, lr=0.2), averager)
    out["averager_step"] = averager.step

    state = plsgd.PostLocalSGDState(None, None, start_localSGD_iter=3, post_local_gradient_allreduce=False)
    averager = averagers.PeriodicModelAverager(period=2, warmup_steps=3)
    opt = train("optimizer", state, lambda ps: PostLocalSGDOptimizer(torch.optim.Adam(ps, lr=0.05), averager))
    sd = opt.state_dict()
    out["sd_keys"] = sorted(sd)
    out["sd_step"] = sd["step"]
    averager.step = 0
    opt.load_state_dict(sd)
    out["loaded_step"] = averager.step

    state = plsgd.PostLocalSGDState(None, solo, start_localSGD_iter=1)
    averager = hierarchical_model_averager.HierarchicalModelAverager(
        OrderedDict([(2, 1), (3, 2)]), warmup_steps=1
    )
    train("hierarchical", state, lambda ps: torch.optim.SGD(ps, lr=0.2, momentum=0.9), averager)

    # average_parameters over parameters without gradients: get_params_to_average skips them
    torch.manual_seed(rank)
    lin = nn.Linear(2, 2)
    lin.weight.grad = torch.ones(2, 2)
    utils.average_parameters_or_parameter_groups([{"params": [lin.weight, lin.bias]}], dist.group.WORLD)
    out["averaged"] = [lin.weight.detach().double().sum().item(), lin.bias.detach().double().sum().item()]
    errors = []
    for bad in (dist.new_subgroups, lambda: averagers.PeriodicModelAverager(period=0)):
        try:
            bad()
        except ValueError as e:
            errors.append(str(e))
    out["errors"] = errors
    dist.destroy_process_group()
    return out


@pytest.fixture(scope="module")
def disttorch_runs():
    return run_ranks(post_local_sgd_run, 2, args=("disttorch",), timeout=60)


ERRORS = [
    "Default group size only takes effect when CUDA is available.If your subgroup using a backend that "
    "does not depend on CUDA,please pass in 'group_size' correctly.",
    "Arg ``period`` must be a positive value.",
]
# PyTorch 2.13 CPU's run of post_local_sgd_run(rank, 2, "torch")
PYTORCH = [
    {
        "periodic": {
            "losses": [1.1037487, 1.1081181, 1.167189, 1.0634384, 1.2955681, 1.3384988],
            "params": [-0.59759956, -0.81698003, -1.0364212, -0.32157698],
            "iter": 2,
        },
        "averager_step": 6,
        "optimizer": {
            "losses": [1.1037487, 1.1275753, 1.2942059, 1.2758782, 1.1145769, 1.8405101],
            "params": [1.0881479, -0.7467398, -0.8495708, -0.20826146],
            "iter": 3,
        },
        "sd_keys": ["param_groups", "state", "step"],
        "sd_step": 6,
        "loaded_step": 6,
        "errors": ERRORS,
        "hierarchical": {
            "losses": [1.1037487, 1.1081181, 1.158282, 1.2307814, 1.1829942, 1.6233722],
            "params": [-0.1571105, -0.82301366, -1.0364212, -0.32157692],
            "iter": 1,
        },
        "averaged": [-0.24064082, -0.082729355],
    },
    {
        "periodic": {
            "losses": [1.0731835, 1.0878217, 1.076504, 1.2335802, 1.0838046, 1.0254371],
            "params": [-0.61631696, -0.81482495, -1.0364213, -0.32157698],
            "iter": 2,
        },
        "averager_step": 6,
        "optimizer": {
            "losses": [1.0731835, 0.97428, 1.3119766, 1.3798978, 0.99732715, 1.0930189],
            "params": [1.0881479, -0.7467398, -0.8495708, -0.20826146],
            "iter": 3,
        },
        "sd_keys": ["param_groups", "state", "step"],
        "sd_step": 6,
        "loaded_step": 6,
        "errors": ERRORS,
        "hierarchical": {
            "losses": [1.0731835, 1.0878217, 1.099193, 1.2878792, 0.98249549, 1.0390618],
            "params": [-0.37161279, -1.0062055, -1.0364211, -0.32157689],
            "iter": 1,
        },
        "averaged": [-0.24064082, -0.24163225],
    },
]


@pytest.mark.timeout(90)
def test_post_local_sgd_gives_pytorchs_losses_and_parameters(disttorch_runs):
    for got, want in zip(disttorch_runs, PYTORCH):
        for name in ("periodic", "optimizer", "hierarchical"):
            np.testing.assert_allclose(got[name]["losses"], want[name]["losses"], rtol=1e-5)
            np.testing.assert_allclose(got[name]["params"], want[name]["params"], rtol=1e-5, atol=1e-6)
            assert got[name]["iter"] == want[name]["iter"]
        np.testing.assert_allclose(got["averaged"], want["averaged"], rtol=1e-6)
        for key in ("averager_step", "sd_keys", "sd_step", "loaded_step", "errors"):
            assert got[key] == want[key], key


def test_ranks_step_apart_after_start_and_meet_at_averaging(disttorch_runs):
    rank0, rank1 = disttorch_runs
    for name in ("periodic", "optimizer", "hierarchical"):
        assert rank0[name]["losses"][0] != rank1[name]["losses"][0]  # each rank's own batch
    # the optimiser's run ends on an averaging step: the parameters are the same again
    assert rank0["optimizer"]["params"] == rank1["optimizer"]["params"]
