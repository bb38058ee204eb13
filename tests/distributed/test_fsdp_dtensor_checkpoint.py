"""Checkpointing fully_shard models through the DTensor API by hand, as PyTorch's FSDP2
example does it: gather the whole model and optimiser state with ``full_tensor()`` (the
Adam state of a sharded parameter is a DTensor laid out like it), then build the model on
the meta device, shard it, and load ``nn.Parameter(distribute_tensor(...))`` shards with
``load_state_dict(assign=True)`` (fully_shard adopts them) and the optimiser's states cut
the same way. The resumed run gives the uninterrupted one's parameters."""

from __future__ import annotations

import numpy as np
from fsdp_models import BATCH, build, data, full_params, train, units

from dist_helpers import run_ranks


def _worker(rank: int, world: int) -> dict:
    import disttorch as torch
    import disttorch.distributed as dist
    from disttorch.distributed.checkpoint.state_dict import _init_optim_state
    from disttorch.distributed.fsdp import fully_shard
    from disttorch.distributed.tensor import DTensor, distribute_tensor

    dist.init_process_group()
    x, y = data("mlp", world)
    sl = slice(rank * BATCH, (rank + 1) * BATCH)

    def sharded(model):
        for unit in units(model, "mlp"):
            fully_shard(unit)
        return fully_shard(model)

    model = sharded(build("mlp"))
    opt = train(model, "mlp", x[:2, sl], y[:2, sl], steps=2)
    full_model = {n: p.full_tensor() for n, p in model.state_dict().items()}
    raw = opt.state_dict()
    kinds = sorted({type(v).__name__ for s in raw["state"].values() for k, v in s.items() if k != "step"})
    full_state = {
        i: {k: v.full_tensor() if isinstance(v, DTensor) else v for k, v in s.items()}
        for i, s in raw["state"].items()
    }
    full_optim = {"param_groups": raw["param_groups"], "state": full_state}

    with torch.device("meta"):
        resumed = build("mlp")
    resumed = sharded(resumed)
    meta_sd = resumed.state_dict()
    shards = {
        n: torch.nn.Parameter(distribute_tensor(full_model[n], meta_sd[n].device_mesh, meta_sd[n].placements))
        for n in meta_sd
    }
    resumed.load_state_dict(shards, strict=False, assign=True)
    same_objects = all(p is shards[n] for n, p in resumed.named_parameters())
    again = torch.nn.Parameter(next(model.parameters()))  # of a sharded parameter: a DTensor
    kinds.append(f"{type(again).__name__}/{isinstance(again, torch.nn.Parameter)}")
    opt2 = torch.optim.Adam(resumed.parameters(), lr=1e-2)
    _init_optim_state(opt2)
    mine = opt2.state_dict()
    for i, s in mine["state"].items():
        for k, v in s.items():
            whole = full_optim["state"][i][k]
            s[k] = distribute_tensor(whole, v.device_mesh, v.placements) if isinstance(v, DTensor) else whole
    mine["param_groups"] = [
        {**g, "params": mine_g["params"]}
        for g, mine_g in zip(full_optim["param_groups"], mine["param_groups"])
    ]
    opt2.load_state_dict(mine)
    # one more step, straight on and resumed
    import disttorch.nn.functional as F

    for m, o in ((model, opt), (resumed, opt2)):
        loss = F.cross_entropy(m(torch.tensor(x[2, sl])), torch.tensor(y[2, sl], dtype=torch.long))
        o.zero_grad()
        loss.backward()
        o.step()
    out = {
        "straight": full_params(model),
        "resumed": full_params(resumed),
        "kinds": kinds,
        "same_objects": same_objects,
        "all_dtensors": all(isinstance(p, DTensor) for p in resumed.parameters()),
    }
    dist.destroy_process_group()
    return out


def test_dtensor_api_checkpoint_resumes_the_run():
    for out in run_ranks(_worker, 2, timeout=120):
        assert out["kinds"] == ["DTensor", "DTensor/True"]  # exp_avg / exp_avg_sq of a shard are DTensors
        assert out["same_objects"] and out["all_dtensors"]
        for name, value in out["straight"].items():
            np.testing.assert_allclose(out["resumed"][name], value, rtol=1e-12, atol=1e-14, err_msg=name)


def _wrong_shard_worker(rank: int, world: int) -> str:
    import disttorch as torch
    import disttorch.distributed as dist
    from disttorch.distributed.fsdp import fully_shard

    dist.init_process_group()
    model = fully_shard(build("mlp"))
    local = model.state_dict()["0.weight"].to_local()
    try:
        model.load_state_dict({"0.weight": torch.nn.Parameter(local.clone())}, strict=False, assign=True)
    except RuntimeError as e:
        return str(e)
    finally:
        dist.destroy_process_group()
    return "no error"


def test_assigning_a_plain_tensor_to_a_sharded_parameter_is_refused():
    for message in run_ranks(_wrong_shard_worker, 2, timeout=60):
        assert "replaced by a Parameter" in message and "DTensor" in message
