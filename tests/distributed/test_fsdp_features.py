"""fully_shard's controls on real processes: the device mesh, DTensor shards,
unshard/reshard, gradient accumulation without sync, mixed precision and hybrid sharding
over a 2-D mesh."""

from __future__ import annotations

import numpy as np
import pytest
from fsdp_models import BATCH, build, data, full_params, train, units

from dist_helpers import run_ranks


def _mesh_worker(rank: int, world: int) -> dict:
    import disttorch as torch
    import disttorch.distributed as dist
    from disttorch.distributed.device_mesh import init_device_mesh
    from disttorch.distributed.tensor import DTensor, Shard, distribute_tensor
    from disttorch.distributed.tensor._utils import compute_local_shape_and_global_offset

    mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("dp",))
    whole = torch.arange(15.0).reshape(5, 3)
    shard = distribute_tensor(whole, mesh, [Shard(0)])
    out = {
        "size": mesh.size(),
        "local_rank": mesh.get_local_rank("dp"),
        "group_size": dist.get_world_size(mesh.get_group()),
        "local": shard.to_local().numpy().copy(),
        "full": shard.full_tensor().detach().numpy(),
        "is_dtensor": isinstance(shard, DTensor),
        "from_local": DTensor.from_local(
            shard.to_local(), mesh, [Shard(0)], shape=(5, 3), stride=(3, 1)
        ).global_shape,
        "local_and_offset": compute_local_shape_and_global_offset((5, 3), mesh, [Shard(0)]),
    }
    mesh2 = init_device_mesh("cpu", (2, world // 2), mesh_dim_names=("replicate", "shard"))
    out["coordinate"] = mesh2.get_coordinate()
    out["rows"] = [dist.get_process_group_ranks(mesh2.get_group(d)) for d in ("replicate", "shard")]
    out["sub"] = mesh2["shard"].mesh.tolist()
    out["mesh dtype"] = str(mesh2.mesh.dtype)
    dist.destroy_process_group()
    return out


def test_device_mesh_1d_2d_and_dtensor():
    for rank, out in enumerate(run_ranks(_mesh_worker, 4, timeout=90)):
        assert out["size"] == 4 and out["local_rank"] == rank and out["group_size"] == 4
        expected = np.arange(15.0).reshape(5, 3)[[[0, 1], [2, 3], [4], []][rank]]
        np.testing.assert_array_equal(out["local"], expected.reshape(-1, 3))
        np.testing.assert_array_equal(out["full"], np.arange(15.0).reshape(5, 3))
        assert out["is_dtensor"] and tuple(out["from_local"]) == (5, 3)
        assert (
            out["local_and_offset"]
            == (((2, 3), (0, 0)), ((2, 3), (2, 0)), ((1, 3), (4, 0)), ((0, 3), (5, 0)))[rank]
        )
        assert out["coordinate"] == (rank // 2, rank % 2)  # a tuple, as PyTorch 2.13's
        assert out["rows"] == [[rank % 2, rank % 2 + 2], [rank - rank % 2, rank - rank % 2 + 1]]
        assert out["sub"] == [rank - rank % 2, rank - rank % 2 + 1]
        assert out["mesh dtype"].endswith(".int32")  # as PyTorch's mesh tensors


def _memory_between_steps(torch, fully_shard) -> tuple:
    """(bytes of the whole parameters, bytes held by the model between steps): built whole,
    sharded, two SGD steps, measured by tracemalloc (NumPy reports its buffers to it; the
    modules a first use imports would count too, so they are imported before)."""
    import gc
    import tracemalloc

    torch.ones(4, 512).sum()  # (kernels loaded on first use, numba's among them, load before)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.Linear(512, 512))
        whole = sum(p.numel() * p.element_size() for p in model.parameters())
        for layer in model:
            fully_shard(layer)
        fully_shard(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            model(torch.ones(4, 512)).sum().backward()
            opt.step()
            opt.zero_grad()
        gc.collect()
        return whole, tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def _controls_worker(rank: int, world: int) -> dict:
    import disttorch as torch
    import disttorch.distributed as dist
    import disttorch.nn.functional as F
    from disttorch.distributed.fsdp import FSDPModule, fully_shard

    dist.init_process_group()
    model = build("mlp")
    for m in units(model, "mlp"):
        fully_shard(m)
    fully_shard(model)
    out = {"is_fsdp": isinstance(model, FSDPModule), "name": type(model).__name__}
    model[0].unshard()
    out["unsharded"] = tuple(model[0].weight.shape)
    model[0].reshard()
    out["resharded"] = (tuple(model[0].weight.shape), tuple(model[0].weight.to_local().shape))
    # two micro-batches: the first without gradient sync, the second reduces their sum
    x, y = data("mlp", world)
    sl = slice(rank * BATCH, (rank + 1) * BATCH)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    seen = []  # the next unit's state while the first one runs: prefetched from the 2nd forward on
    model[0].register_forward_pre_hook(lambda *_: seen.append(model[2]._fsdp_state.unit.state))
    seen_backward = []  # the previous unit's state when this one's backward starts (after FSDP's hook)

    def watch_backward(_module, _args, out) -> None:
        out.register_hook(lambda _grad: seen_backward.append(model[0]._fsdp_state.unit.state))

    model[2].register_forward_hook(watch_backward)
    seen_root_backward = []  # the last unit's state when the root's backward starts

    def watch_root(_module, _args, out) -> None:
        out.register_hook(lambda _grad: seen_root_backward.append(model[2]._fsdp_state.unit.state))

    model.register_forward_hook(watch_root)
    for step, sync in ((0, False), (1, True)):
        model.set_requires_gradient_sync(sync)
        loss = F.cross_entropy(model(torch.tensor(x[step, sl])), torch.tensor(y[step, sl]))
        # between forward and backward: the units freed their whole parameters, the root did not
        out[f"after_forward_{step}"] = [model[i]._fsdp_state.unit.state for i in (0, 2)] + [
            model._fsdp_state.unit.state,
            tuple(model[4].weight.shape),
            model[0]._fsdp_state.unit.params[0].unsharded._data.size,
        ]
        loss.backward()
        out[f"grad_after_{step}"] = model[0].weight.grad is not None
    opt.step()
    # clip_grad_norm_ of sharded gradients: the whole gradients' norm, a replicated DTensor
    from disttorch.distributed.tensor.debug import CommDebugMode

    with CommDebugMode() as comm_mode:  # one all-reduce of the partial norms, as PyTorch's
        total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1e-3)
    out["clip"] = (
        type(total).__name__,
        total.placements,
        float(total.full_tensor()),
        comm_mode.get_total_counts(),
    )
    out["clipped"] = float(torch.nn.utils.get_total_norm([p.grad for p in model.parameters()]))
    out["prefetch"] = seen
    out["prefetch_backward"] = seen_backward
    out["prefetch_root_backward"] = seen_root_backward
    out["params"] = full_params(model)
    out["memory"] = _memory_between_steps(torch, fully_shard)
    tied = build("tied")  # a tie cut by a unit boundary is refused, not silently broken
    fully_shard(tied.emb)
    try:
        fully_shard(tied)
    except ValueError as e:
        out["tie_error"] = str(e)
    dist.destroy_process_group()
    return out


def test_unshard_reshard_and_gradient_accumulation():
    import disttorch as torch
    import disttorch.nn.functional as F
    from disttorch.distributed.tensor import Replicate

    world = 2
    model = build("mlp")
    x, y = data("mlp", world)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in (0, 1):  # the mean over both ranks' halves, accumulated over two micro-batches
        F.cross_entropy(model(torch.tensor(x[step])), torch.tensor(y[step])).backward()
    opt.step()
    expected = full_params(model)
    grad_norm = float(
        np.sqrt(sum((p.grad.numpy().astype(np.float64) ** 2).sum() for p in model.parameters()))
    )
    for out in run_ranks(_controls_worker, world, timeout=90):
        assert out["clip"][:2] == ("DTensor", (Replicate(),)) and out["clip"][3] == 1
        np.testing.assert_allclose(out["clip"][2], grad_norm, rtol=1e-6)
        np.testing.assert_allclose(out["clipped"], 1e-3, rtol=1e-4)
        # between steps a rank holds its 1/N of the parameters: no whole parameter, gradient
        # or reduce-scatter buffer (1 MiB per layer here) is left behind
        whole, held = out["memory"]
        assert whole / world <= held < whole / world + 2**19, (whole, held)
        assert out["is_fsdp"] and out["name"] == "FSDPSequential"
        assert out["unsharded"] == (10, 12) and out["resharded"] == ((10, 12), (5, 12))
        assert out["grad_after_0"] is False and out["grad_after_1"] is True
        assert "shared with a module fully_shard was applied to earlier" in out["tie_error"]
        assert out["after_forward_0"] == ["sharded", "sharded", "unsharded", (3, 7), 0]
        assert out["prefetch"][0] == "sharded" and out["prefetch"][1] in ("gathering", "unsharded")
        assert out["prefetch_backward"][0] == "sharded"
        assert out["prefetch_backward"][1] in ("gathering", "unsharded")
        # the root's backward prefetches the last unit, whose backward comes next
        assert out["prefetch_root_backward"][0] == "sharded"
        assert out["prefetch_root_backward"][1] in ("gathering", "unsharded")
        for name in expected:
            np.testing.assert_allclose(out["params"][name], expected[name], rtol=1e-10, err_msg=name)


def _precision_worker(rank: int, world: int) -> dict:
    import disttorch as torch
    import disttorch.distributed as dist
    from disttorch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, fully_shard

    dist.init_process_group()
    model = build("mlp").float()
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for m in units(model, "mlp"):  # CPU offload: accepted, a no-op where every rank is a CPU rank
        fully_shard(m, mp_policy=policy, offload_policy=CPUOffloadPolicy())
    fully_shard(model, mp_policy=policy)
    x, y = data("mlp", world)
    sl = slice(rank * BATCH, (rank + 1) * BATCH)
    train(model, "mlp", x[:, sl].astype(np.float32), y[:, sl])
    dtypes = {str(p.dtype) for p in model.parameters()}
    params = full_params(model)
    dist.destroy_process_group()
    return {"params": params, "dtypes": dtypes}


def test_mixed_precision_bfloat16_params_float32_reduction():
    model = build("mlp").float()
    x, y = data("mlp", 2)
    train(model, "mlp", x.astype(np.float32), y)
    expected = full_params(model)
    for out in run_ranks(_precision_worker, 2, timeout=90):
        assert out["dtypes"] == {"disttorch.float32"}  # shards and optimiser stay float32
        for name in expected:  # bfloat16 compute: about 3 significant digits
            np.testing.assert_allclose(out["params"][name], expected[name], atol=3e-2, err_msg=name)


def _hybrid_worker(rank: int, world: int, kind: str) -> tuple:
    import disttorch.distributed as dist
    from disttorch.distributed.device_mesh import init_device_mesh
    from disttorch.distributed.fsdp import fully_shard

    mesh = init_device_mesh("cpu", (2, world // 2), mesh_dim_names=("replicate", "shard"))
    model = build(kind)
    for m in units(model, kind):
        fully_shard(m, mesh=mesh)
    fully_shard(model, mesh=mesh)
    local = sum(p.to_local().numel() for p in model.parameters())  # the shards (shape is global)
    x, y = data(kind, world)
    sl = slice(rank * BATCH, (rank + 1) * BATCH)
    train(model, kind, x[:, sl], y[:, sl])
    params = full_params(model)
    dist.destroy_process_group()
    return params, local


def test_hybrid_sharding_on_a_2d_mesh():
    world = 4
    model = build("gpt")
    total = sum(p.numel() for p in model.parameters())
    x, y = data("gpt", world)
    train(model, "gpt", x, y)
    expected = full_params(model)
    results = run_ranks(_hybrid_worker, world, args=("gpt",), timeout=150)
    for params, local in results:
        assert local < total / 2 + 64  # sharded 2 ways, replicated across the 2 rows
        for name in expected:
            np.testing.assert_allclose(params[name], expected[name], rtol=1e-9, atol=1e-11, err_msg=name)


def test_names_libraries_import_from_the_fsdp_modules():
    """What transformers, accelerate and opacus import at load time (prompts' import list)."""
    from disttorch.distributed._composable.fsdp import FSDPModule, fully_shard
    from disttorch.distributed.checkpoint.hf_storage import HuggingFaceStorageReader
    from disttorch.distributed.fsdp import CPUOffloadPolicy, FullyShardedDataParallel, MixedPrecisionPolicy
    from disttorch.distributed.fsdp.fully_sharded_data_parallel import BackwardPrefetch, ShardingStrategy
    from disttorch.distributed.fsdp.wrap import size_based_auto_wrap_policy, transformer_auto_wrap_policy
    from disttorch.distributed.tensor.placement_types import Shard, _StridedShard

    assert fully_shard.__name__ == "fully_shard" and FSDPModule and FullyShardedDataParallel
    assert CPUOffloadPolicy and MixedPrecisionPolicy and BackwardPrefetch and ShardingStrategy
    assert size_based_auto_wrap_policy and transformer_auto_wrap_policy
    assert Shard.local_shard_size_and_offset(10, 4, 3) == (1, 9) and isinstance(_StridedShard(0, 2), Shard)
    with pytest.raises(NotImplementedError, match="not supported"):
        HuggingFaceStorageReader("ckpt")


def test_bad_input_is_reported():
    import disttorch.nn as nn
    from disttorch.distributed.device_mesh import init_device_mesh
    from disttorch.distributed.fsdp import fully_shard
    from disttorch.distributed.tensor import Shard
    from disttorch.distributed.tensor.placement_types import _StridedShard

    with pytest.raises(ValueError, match="expects an nn.Module"):
        fully_shard(object())
    with pytest.raises(RuntimeError, match="init_process_group"):
        fully_shard(nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="'cuda' is not available"):
        init_device_mesh("cuda", (1,))
    from disttorch.distributed.tensor._api import normalize_placements

    class OneDim:
        ndim = 1

    with pytest.raises(ValueError, match="same length as `device_mesh.ndim`"):
        normalize_placements(OneDim(), [Shard(0), Shard(0)], 2)
    # kept (its dim made non-negative): FSDP's shard of a tensor-parallel piece uses it
    assert normalize_placements(OneDim(), [_StridedShard(-2, 2)], 2) == (_StridedShard(0, 2),)
    # reshard_after_forward as an int (a smaller group to reshard to), checked as PyTorch's
    from disttorch.nn.parallel.fsdp._api import _reshard_after_forward

    assert _reshard_after_forward(None, 4) is True and _reshard_after_forward(4, 4) is True
    assert _reshard_after_forward(1, 4) is False and _reshard_after_forward(2, 4) is False
    with pytest.raises(ValueError, match="it should be a factor of 4, not 3"):
        _reshard_after_forward(3, 4)


def test_signatures_match_pytorch(torch):
    """The argument names of the public FSDP, mesh, DTensor and checkpoint API are PyTorch's."""
    import importlib
    import inspect

    pairs = [
        ("distributed.fsdp", "fully_shard"),
        ("distributed.fsdp", "MixedPrecisionPolicy"),
        ("distributed.fsdp", "MixedPrecision"),
        ("distributed.fsdp", "FullStateDictConfig"),
        ("distributed.fsdp.wrap", "transformer_auto_wrap_policy"),
        ("distributed.fsdp.wrap", "size_based_auto_wrap_policy"),
        ("distributed.fsdp.wrap", "lambda_auto_wrap_policy"),
        ("distributed.device_mesh", "init_device_mesh"),
        ("distributed.tensor", "distribute_tensor"),
        ("distributed.checkpoint", "save"),
        ("distributed.checkpoint", "load"),
        ("distributed.checkpoint.state_dict", "get_model_state_dict"),
        ("distributed.checkpoint.state_dict", "set_model_state_dict"),
        ("distributed.checkpoint.state_dict", "get_optimizer_state_dict"),
        ("distributed.checkpoint.state_dict", "set_optimizer_state_dict"),
        ("distributed.checkpoint.state_dict", "get_state_dict"),
        ("distributed.checkpoint.state_dict", "set_state_dict"),
    ]
    for module, name in pairs:
        ours = getattr(importlib.import_module(f"disttorch.{module}"), name)
        theirs = getattr(importlib.import_module(f"torch.{module}"), name)
        assert list(inspect.signature(ours).parameters) == list(inspect.signature(theirs).parameters), name
    ours = importlib.import_module("disttorch.distributed.fsdp").FullyShardedDataParallel
    theirs = torch.distributed.fsdp.FullyShardedDataParallel
    for method in (
        "__init__",
        "summon_full_params",
        "state_dict_type",
        "optim_state_dict",
        "clip_grad_norm_",
    ):
        a, b = inspect.signature(getattr(ours, method)), inspect.signature(getattr(theirs, method))
        assert list(a.parameters)[: len(b.parameters)] == list(b.parameters), method


@pytest.mark.parity
def test_old_dtensor_module_paths_match_pytorch(torch):
    """The tensor-parallel examples import the mesh and placements under the old
    ``torch.distributed._tensor`` paths (and ``torch.distributed.tensor.device_mesh``)."""
    import importlib

    for module, name in [
        ("distributed._tensor.device_mesh", "init_device_mesh"),
        ("distributed._tensor.device_mesh", "DeviceMesh"),
        ("distributed.tensor.device_mesh", "init_device_mesh"),
        ("distributed._tensor.placement_types", "Shard"),
        ("distributed._tensor.placement_types", "Replicate"),
    ]:
        ours = importlib.import_module(f"disttorch.{module}")
        assert hasattr(importlib.import_module(f"torch.{module}"), name)
        assert getattr(ours, name) is getattr(importlib.import_module("disttorch.distributed.tensor"), name)
