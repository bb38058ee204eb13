"""The FullyShardedDataParallel wrapper and FSDP state dicts on real processes: sharding
strategies and auto-wrap policies give one process's parameters; a full state dict loads
into a plain model and into PyTorch; a sharded checkpoint (distributed.checkpoint) resumes
to bitwise the same training and loads into a plain model in one process."""

from __future__ import annotations

import numpy as np
import pytest
from fsdp_models import BATCH, build, data, full_params, train

import disttorch

from dist_helpers import run_ranks


def _wrapper_worker(rank: int, world: int, kind: str, strategy: str) -> dict:
    import disttorch.distributed as dist
    from disttorch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from disttorch.distributed.fsdp import ShardingStrategy, StateDictType
    from disttorch.distributed.fsdp.api import FullStateDictConfig
    from disttorch.distributed.fsdp.wrap import ModuleWrapPolicy, size_based_auto_wrap_policy

    dist.init_process_group()
    model = build(kind)
    if kind == "gpt":
        policy = ModuleWrapPolicy({type(model.blocks[0])})
    else:
        policy = lambda module, recurse, nonwrapped_numel: size_based_auto_wrap_policy(  # noqa: E731
            module, recurse, nonwrapped_numel, min_num_params=50
        )
    wrapped = FSDP(
        model, sharding_strategy=ShardingStrategy[strategy], auto_wrap_policy=policy, sync_module_states=True
    )
    units = sum(isinstance(m, FSDP) for m in wrapped.modules())  # nested wrappers, as PyTorch's
    names = [n for n, _ in wrapped.named_parameters()]
    if kind == "gpt":  # checkpointing the wrapped blocks: PyTorch's wrapper goes inside FSDP's
        from disttorch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
            apply_activation_checkpointing,
        )

        block = type(model.blocks[0].module)  # the wrapped module keeps its class's name
        apply_activation_checkpointing(wrapped, check_fn=lambda m: isinstance(m, block))
    shown = repr(wrapped)
    x, y = data(kind, world)
    sl = slice(rank * BATCH, (rank + 1) * BATCH)
    opt = train(wrapped, kind, x[:, sl], y[:, sl])
    config = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    with FSDP.state_dict_type(wrapped, StateDictType.FULL_STATE_DICT, config):
        full = {k: v.numpy().copy() for k, v in wrapped.state_dict().items()}
    with FSDP.state_dict_type(wrapped, StateDictType.FULL_STATE_DICT):  # the optimiser, whole, and back
        optim_full = FSDP.optim_state_dict(wrapped, opt)
        before = {k: v.numpy().copy() for k, v in opt.state_dict()["state"][0].items()}
        opt.load_state_dict(FSDP.optim_state_dict_to_load(wrapped, opt, optim_full))
        after = {k: v.numpy() for k, v in opt.state_dict()["state"][0].items()}
    optim_shapes = {n: tuple(s["exp_avg"].shape) for n, s in optim_full["state"].items()}
    optim_keys = {tuple(s) for s in optim_full["state"].values()}
    with FSDP.summon_full_params(wrapped):
        summoned = {
            n.replace("_checkpoint_wrapped_module.", ""): tuple(p.shape)
            for n, p in wrapped.named_parameters()
        }  # PyTorch's wrapper names them without its prefixes there
    dist.destroy_process_group()
    same = before.keys() == after.keys() and all(np.array_equal(before[k], after[k]) for k in before)
    return {
        "full": full,
        "units": units,
        "names": names,
        "repr": shown,
        "summoned": summoned,
        "optim_shapes": optim_shapes,
        "optim_same": same,
        "optim_keys": optim_keys,
    }


@pytest.mark.parametrize(
    "kind,strategy",
    [("mlp", "FULL_SHARD"), ("mlp", "SHARD_GRAD_OP"), ("mlp", "NO_SHARD"), ("gpt", "FULL_SHARD")],
)
def test_wrapper_strategies_and_full_state_dict(kind, strategy):
    model = build(kind)
    x, y = data(kind, 2)
    train(model, kind, x, y)
    expected = full_params(model)
    results = run_ranks(_wrapper_worker, 2, args=(kind, strategy), timeout=120)
    assert results[1]["full"] == {}  # rank0_only
    full = results[0]["full"]
    assert set(expected) <= set(full)
    for name in expected:
        np.testing.assert_allclose(full[name], expected[name], rtol=1e-9, atol=1e-11, err_msg=name)
    for out in results:
        assert out["units"] == 3  # the root and two blocks (GPT) or two Linear layers (MLP)
        # each unit's parameters under its own wrapper's prefix, as PyTorch's nested wrappers
        assert all(n.startswith("_fsdp_wrapped_module.") for n in out["names"])
        assert sum(n.count("_fsdp_wrapped_module.") == 2 for n in out["names"]) >= 2
        # printed as PyTorch's nested wrappers, under the modules' own class names
        assert out["repr"].startswith("FullyShardedDataParallel(\n  (_fsdp_wrapped_module): ")
        assert out["repr"].count("FullyShardedDataParallel(\n") == 3 and "FSDP" not in out["repr"]
        if kind == "gpt":
            assert (
                "(1): FullyShardedDataParallel(\n        (_fsdp_wrapped_module): CheckpointWrapper(\n"
                "          (_checkpoint_wrapped_module): Block(\n"
            ) in out["repr"]
        assert out["summoned"] == {n: tuple(p.shape) for n, p in model.named_parameters()}
        assert out["optim_shapes"] == out["summoned"] and out["optim_same"]
        assert out["optim_keys"] == {("exp_avg", "exp_avg_sq", "step")}  # PyTorch's: in name order
    plain = build(kind)  # the full state dict loads into a plain model
    plain.load_state_dict({k: disttorch.tensor(v) for k, v in full.items()})


def test_full_state_dict_loads_into_pytorch(torch):
    import os
    import sys

    sys.path.insert(
        0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "benchmarks")
    )
    from models import build_mlp

    results = run_ranks(_wrapper_worker, 2, args=("mlp", "FULL_SHARD"), timeout=120)
    full = results[0]["full"]
    reference = torch.nn.Module.double(build_mlp(torch, (12, 10, 7, 3)))
    reference.load_state_dict({k: torch.from_numpy(v) for k, v in full.items()})
    ours = build("mlp")
    ours.load_state_dict({k: disttorch.tensor(v) for k, v in full.items()})
    x = np.random.default_rng(0).standard_normal((5, 12))
    np.testing.assert_allclose(
        reference(torch.from_numpy(x)).detach().numpy(),
        ours(disttorch.tensor(x)).detach().numpy(),
        rtol=1e-12,
    )


def _checkpoint_worker(rank: int, world: int, directory: str) -> dict:
    import disttorch as torch
    import disttorch.distributed as dist
    import disttorch.distributed.checkpoint as dcp
    from disttorch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        get_optimizer_state_dict,
        get_state_dict,
        set_state_dict,
    )
    from disttorch.distributed.fsdp import fully_shard

    dist.init_process_group()
    x, y = data("gpt", world)
    sl = slice(rank * BATCH, (rank + 1) * BATCH)

    def sharded_gpt():
        model = build("gpt")
        for block in model.blocks:
            fully_shard(block)
        fully_shard(model)
        return model, torch.optim.Adam(model.parameters(), lr=1e-2)

    def step(model, opt, s):
        import disttorch.nn.functional as F

        out = model(torch.tensor(x[s, sl], dtype=torch.long))
        loss = F.cross_entropy(
            out.reshape(-1, out.shape[-1]), torch.tensor(y[s, sl].reshape(-1), dtype=torch.long)
        )
        opt.zero_grad()
        loss.backward()
        opt.step()

    model, opt = sharded_gpt()
    for s in range(2):
        step(model, opt, s)
    model_sd, optim_sd = get_state_dict(model, opt)
    dcp.save({"model": model_sd, "optim": optim_sd}, checkpoint_id=directory)
    full_optim = get_optimizer_state_dict(model, opt, options=StateDictOptions(full_state_dict=True))
    optim_shapes = {n: tuple(s["exp_avg"].shape) for n, s in full_optim["state"].items()}
    saved = full_params(model)
    step(model, opt, 2)
    straight = full_params(model)

    resumed, opt2 = sharded_gpt()  # fresh initial values, then the checkpoint
    model_sd, optim_sd = get_state_dict(resumed, opt2)
    state = {"model": model_sd, "optim": optim_sd}
    dcp.load(state, checkpoint_id=directory)
    set_state_dict(resumed, opt2, model_state_dict=state["model"], optim_state_dict=state["optim"])
    step(resumed, opt2, 2)
    again = full_params(resumed)
    dist.destroy_process_group()
    return {"straight": straight, "resumed": again, "saved": saved, "optim_shapes": optim_shapes}


def test_sharded_checkpoint_resumes_bitwise_and_loads_in_one_process(tmp_path):
    import disttorch.distributed.checkpoint as dcp

    directory = str(tmp_path / "ckpt")
    results = run_ranks(_checkpoint_worker, 2, args=(directory,), timeout=150)
    for out in results:
        assert out["optim_shapes"] == {n: v.shape for n, v in out["saved"].items()}  # gathered whole
        for name, value in out["straight"].items():
            np.testing.assert_array_equal(out["resumed"][name], value, err_msg=name)
    plain = build("gpt")  # the sharded checkpoint, re-assembled into a whole model in one process
    sd = plain.state_dict()
    dcp.load({"model": sd}, checkpoint_id=directory, no_dist=True)
    for name, value in results[0]["saved"].items():
        np.testing.assert_array_equal(sd[name].numpy(), value, err_msg=name)


def _pytorch_fsdp_worker(rank: int, world: int, state: dict) -> dict:
    """PyTorch's fully_shard (gloo, CPU): load our full state dict, give it back gathered."""
    import os
    import sys

    import torch
    import torch.distributed as dist
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
    from torch.distributed.fsdp import fully_shard

    sys.path.insert(
        0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "benchmarks")
    )
    from models import build_mlp

    dist.init_process_group("gloo")
    model = build_mlp(torch, (12, 10, 7, 3)).double()
    model.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    for m in (model[0], model[2]):
        fully_shard(m)
    fully_shard(model)
    options = StateDictOptions(full_state_dict=True, cpu_offload=True)
    out = {k: v.numpy().copy() for k, v in get_model_state_dict(model, options=options).items()}
    dist.destroy_process_group()
    return out


def _reload_worker(rank: int, world: int, state: dict) -> dict:
    """Our fully_shard: load a full state dict (rank 0's only, broadcast), give it back."""
    import disttorch.distributed as dist
    from disttorch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        get_model_state_dict,
        set_model_state_dict,
    )
    from disttorch.distributed.fsdp import fully_shard

    dist.init_process_group()
    model = build("mlp")
    for m in (model[0], model[2]):
        fully_shard(m)
    fully_shard(model)
    given = {k: disttorch.tensor(v) for k, v in state.items()} if rank == 0 else {}
    set_model_state_dict(
        model, given, options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)
    )
    out = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    dist.destroy_process_group()
    return {k: v.numpy().copy() for k, v in out.items()}


def test_full_state_dict_round_trip_through_pytorch_fsdp(torch):
    ours = run_ranks(_wrapper_worker, 2, args=("mlp", "FULL_SHARD"), timeout=120)[0]["full"]
    theirs = run_ranks(_pytorch_fsdp_worker, 2, args=(ours,), timeout=120)
    assert theirs[1] == {}
    back = run_ranks(_reload_worker, 2, args=(theirs[0],), timeout=120)
    assert back[1] == {}
    for name, value in ours.items():
        np.testing.assert_array_equal(theirs[0][name], value, err_msg=name)
        np.testing.assert_array_equal(back[0][name], value, err_msg=name)


def _meta_model_worker(rank: int, world: int) -> dict:
    """A model built on the meta device, sharded there and loaded from rank 0's full state
    dict (the FSDP2 recipe) against the same model built with its values: both train alike."""
    import warnings

    import disttorch.distributed as dist
    from disttorch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict
    from disttorch.distributed.fsdp import fully_shard

    dist.init_process_group()
    x, y = data("mlp", world)
    part = slice(rank * BATCH, (rank + 1) * BATCH)
    trained = {}
    for how in ("meta", "built"):
        if how == "meta":
            with disttorch.device("meta"):
                model = build("mlp")
        else:
            model = build("mlp")
        for m in (model[0], model[2]):
            fully_shard(m)
        fully_shard(model)
        if how == "meta":
            given = build("mlp").state_dict() if rank == 0 else {}
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # no "copying into a meta parameter" warning
                set_model_state_dict(
                    model, given, options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)
                )
            still_meta = [n for n, p in model.named_parameters() if p.is_meta]
        train(model, "mlp", x[:, part], y[:, part])
        trained[how] = full_params(model)
    dist.destroy_process_group()
    return {"still_meta": still_meta, **trained}


def test_a_meta_model_loaded_from_rank_0_takes_the_values_as_its_parameters():
    for out in run_ranks(_meta_model_worker, 2, timeout=120):
        assert out["still_meta"] == []
        for name, value in out["built"].items():
            np.testing.assert_array_equal(out["meta"][name], value, err_msg=name)
