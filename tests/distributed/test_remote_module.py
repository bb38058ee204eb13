"""torch.distributed.nn.RemoteModule on real processes, and DDP inside distributed autograd:
a DDP-replicated dense layer on two trainers over a RemoteModule embedding table on a
parameter server (pytorch/examples' ``distributed/rpc/ddp_rpc``), whose parameters must
equal one process's computation of the same steps, and PyTorch's when it is installed."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from dist_helpers import free_port, run_ranks

NUM_EMB, DIM, OUT, LR, STEPS = 10, 4, 3, 0.1, 3


def _batch(trainer: int, step: int) -> tuple[list, list, list]:
    """(indices, offsets, targets) of one trainer's step: fixed, different per trainer."""
    rng = np.random.default_rng(100 * trainer + step)
    indices = rng.integers(0, NUM_EMB, 7).tolist()
    return indices, [0, 3, 5], rng.integers(0, OUT, 3).tolist()


def _job(rank: int, world: int, pg_port: int) -> dict:
    import rpc_helpers as h

    import disttorch as dt
    import disttorch.distributed as dist
    import disttorch.distributed.autograd as dist_autograd
    from disttorch.distributed import rpc
    from disttorch.distributed.nn import RemoteModule
    from disttorch.distributed.optim import DistributedOptimizer
    from disttorch.nn.parallel import DistributedDataParallel as DDP

    name = "ps" if rank == 0 else f"trainer{rank - 1}"
    if rank > 0:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{pg_port}", rank=rank - 1, world_size=2)
    rpc.init_rpc(name, rank=rank, world_size=world)
    out: dict = {}
    if rank == 1:
        out.update(_api_checks(dt, rpc, RemoteModule))
        dt.manual_seed(0)
        emb = RemoteModule("ps/cpu", dt.nn.EmbeddingBag, args=(NUM_EMB, DIM), kwargs={"mode": "sum"})
        out["emb0"] = emb.get_module_rref().to_here().weight.tolist()
        rpc.rpc_sync("trainer1", h.hold, args=(emb,))  # a RemoteModule travels by RPC
    if rank > 0:
        dist.barrier()
        emb = emb if rank == 1 else h.held()[0]
        dt.manual_seed(rank)  # different replicas: DDP broadcasts trainer0's
        fc = DDP(dt.nn.Linear(DIM, OUT))
        out["fc0"] = [p.tolist() for p in fc.parameters()]
        params = emb.remote_parameters() + [rpc.RRef(p) for p in fc.parameters()]
        opt = DistributedOptimizer(dt.optim.SGD, params, lr=LR)
        losses = []
        for step in range(STEPS):
            indices, offsets, target = (dt.tensor(v) for v in _batch(rank - 1, step))
            with dist_autograd.context() as cid:
                loss = dt.nn.functional.cross_entropy(fc(emb.forward(indices, offsets)), target)
                dist_autograd.backward(cid, [loss])
                opt.step(cid)
            losses.append(loss.item())
            dist.barrier()  # both trainers' steps land before the next forward
        out["losses"] = losses
        out["fc"] = [p.tolist() for p in fc.parameters()]
        out["emb"] = emb.get_module_rref().rpc_sync().state_dict()["weight"].tolist()
    rpc.shutdown()
    if rank > 0:
        dist.destroy_process_group()
    return out


def _api_checks(dt, rpc, RemoteModule) -> dict:  # noqa: N803 - the class under test
    """forward, forward_async, remote_parameters, placement by rank, and the refusals."""
    import rpc_helpers as h

    out: dict = {}
    lin = RemoteModule("ps/cpu", dt.nn.Linear, args=(3, 2))
    x = dt.tensor([[1.0, 2.0, 3.0]])
    local = lin.get_module_rref().to_here()
    out["forward"] = (lin.forward(x).tolist(), lin(x).tolist(), lin.forward_async(x).wait().tolist())
    out["local"] = local(x).tolist()
    out["elsewhere"] = rpc.rpc_sync("trainer1", h.remote_module_forward, args=(lin, x)).tolist()
    params = lin.remote_parameters()
    out["params"] = [(p.owner_name(), tuple(p.to_here().shape)) for p in params]
    out["by_rank"] = RemoteModule("rank:0", dt.nn.ReLU).forward(dt.tensor([-1.0, 2.0])).tolist()
    out["train"] = (lin.eval().training, lin.train().training)
    errors = {}
    for key, call in {
        "three_fields": lambda: RemoteModule("a/b/cpu", dt.nn.ReLU),
        "bad_rank": lambda: RemoteModule("rank:x/cpu", dt.nn.ReLU),
        "bad_device": lambda: RemoteModule("ps/bogus", dt.nn.ReLU),
        "not_a_module": lambda: RemoteModule("ps", dict).forward(),
        "parameters": lambda: lin.parameters(),
        "to": lambda: lin.to("cpu"),
        "state_dict": lambda: lin.state_dict(),
        "hook": lambda: lin.register_forward_hook(print),
        "pickle": lambda: pickle.dumps(lin),
    }.items():
        try:
            call()
            errors[key] = None
        except Exception as e:  # noqa: BLE001 - recorded for the test
            errors[key] = (type(e).__name__, str(e).split("\n")[0])
    out["errors"] = errors
    return out


@pytest.fixture(scope="module")
def job() -> list:
    return run_ranks(_job, 3, args=(free_port(),), timeout=120)


def test_forward_runs_the_module_on_its_worker(job):
    t = job[1]
    for got in t["forward"]:
        np.testing.assert_allclose(got, t["local"], rtol=1e-6)
    np.testing.assert_allclose(t["elsewhere"], t["local"], rtol=1e-6)
    assert t["params"] == [("ps", (2, 3)), ("ps", (2,))]
    assert t["by_rank"] == [0.0, 2.0]
    assert t["train"] == (False, True)


def test_remote_module_refuses_what_pytorch_refuses(job):
    e = job[1]["errors"]
    parse = "The valid format is '<workername>/<device>' or 'rank:<rank>/<device>' or '<device>'"
    assert e["three_fields"] == ("ValueError", f"Could not parse remote_device: a/b/cpu. {parse}")
    assert e["bad_rank"] == ("ValueError", f"Could not parse remote_device: rank:x/cpu. {parse}")
    assert e["bad_device"][0] == "RuntimeError" and "device string: bogus" in e["bad_device"][1]
    assert e["not_a_module"][0] == "ValueError"
    assert e["parameters"] == (
        "ValueError",
        "Method ``parameters`` not supported for RemoteModule. Please use ``remote_parameters`` instead.",
    )
    assert e["to"] == ("ValueError", "Method ``to`` not supported for RemoteModule")
    assert e["state_dict"] == ("ValueError", "Method ``state_dict`` not supported for RemoteModule")
    assert e["hook"] == ("ValueError", "Method ``register_forward_hook`` not supported for RemoteModule")
    assert e["pickle"] == (
        "RuntimeError",
        "Cannot pickle RemoteModule in python pickler. RemoteModule can only be pickled when using RPC",
    )


def test_remote_module_needs_rpc():
    from disttorch.distributed.nn import RemoteModule

    with pytest.raises(AssertionError, match="RemoteModule only works in RPC."):
        RemoteModule("ps/cpu", dict)


def _reference(lib, emb0: list, fc0: list) -> dict:
    """The same steps in one process: DDP averages the dense gradients of the two trainers,
    the embedding table gets one SGD step from each trainer."""
    emb = lib.nn.EmbeddingBag(NUM_EMB, DIM, mode="sum")
    fc = lib.nn.Linear(DIM, OUT)
    with lib.no_grad():
        emb.weight.copy_(lib.tensor(emb0))
        fc.weight.copy_(lib.tensor(fc0[0]))
        fc.bias.copy_(lib.tensor(fc0[1]))
    losses: list = [[], []]
    for step in range(STEPS):
        emb_grads, fc_grads = [], []
        for trainer in (0, 1):
            indices, offsets, target = (lib.tensor(v) for v in _batch(trainer, step))
            loss = lib.nn.functional.cross_entropy(fc(emb(indices, offsets)), target)
            g = lib.autograd.grad(loss, [emb.weight, fc.weight, fc.bias])
            losses[trainer].append(loss.item())
            emb_grads.append(g[0])
            fc_grads.append(g[1:])
        with lib.no_grad():
            emb.weight -= LR * (emb_grads[0] + emb_grads[1])
            fc.weight -= LR * (fc_grads[0][0] + fc_grads[1][0]) / 2
            fc.bias -= LR * (fc_grads[0][1] + fc_grads[1][1]) / 2
    return {"losses": losses, "emb": emb.weight.tolist(), "fc": [fc.weight.tolist(), fc.bias.tolist()]}


def _check_against(job: list, ref: dict) -> None:
    t0, t1 = job[1], job[2]
    for trainer, t in enumerate((t0, t1)):
        np.testing.assert_allclose(t["losses"], ref["losses"][trainer], rtol=1e-5)
        np.testing.assert_allclose(t["emb"], ref["emb"], rtol=1e-5, atol=1e-6)
        for got, want in zip(t["fc"], ref["fc"]):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_ddp_replicas_stay_identical_under_distributed_autograd(job):
    import disttorch as dt

    t0, t1 = job[1], job[2]
    assert t0["fc0"] == t1["fc0"]  # DDP's broadcast
    assert t0["fc"] == t1["fc"]  # the all-reduce fired in every distributed backward
    _check_against(job, _reference(dt, t0["emb0"], t0["fc0"]))


@pytest.mark.parity
def test_ddp_with_remote_module_matches_pytorchs_computation(job, torch):
    _check_against(job, _reference(torch, job[1]["emb0"], job[1]["fc0"]))
