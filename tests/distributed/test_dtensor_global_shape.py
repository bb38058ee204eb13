"""A DTensor's metadata is the whole tensor's, as in PyTorch: ``shape``, ``size()``,
``numel()``, ``dim()``/``ndim``, ``stride()``, ``len()``, ``repr``; ``to_local()`` is the
piece; views and reshapes take global sizes and carry the sharding; ``from_local(shape=,
stride=)`` describes uneven shards; the torch-namespace forms (``torch.reshape(dt, ...)``)
answer as the methods; a ``fully_shard`` parameter is a DTensor of the full
shape. Each is compared with PyTorch's DTensor (gloo, CPU) on the same mesh and layout."""

from __future__ import annotations

import numpy as np
import pytest

from dist_helpers import run_ranks

WHOLE = np.arange(120.0).reshape(5, 8, 3)  # dims 0 and 2 split unevenly over 2 ranks


def _init(lib: str):
    """(torch module, dist module) of ``lib``, the process group started (gloo for PyTorch)."""
    if lib == "torch":
        import torch
        import torch.distributed as dist

        dist.init_process_group("gloo")
    else:
        import disttorch as torch
        import disttorch.distributed as dist

        dist.init_process_group()
    return torch, dist


def _seen(t) -> tuple:
    """What a DTensor says of itself, with plain Python values."""
    return (
        repr(t.placements),
        tuple(t.shape),
        tuple(t.to_local().shape),
        t.full_tensor().detach().numpy().copy(),
    )


def _metadata_worker(rank: int, world: int, lib: str) -> dict:
    torch, dist = _init(lib)
    from importlib import import_module

    tensor_mod = import_module(f"{lib}.distributed.tensor")
    DTensor, Replicate, Shard = tensor_mod.DTensor, tensor_mod.Replicate, tensor_mod.Shard
    mesh = import_module(f"{lib}.distributed.device_mesh").init_device_mesh("cpu", (world,))
    whole = torch.tensor(WHOLE, requires_grad=True)
    out: dict = {}
    for p in (Shard(0), Shard(1), Shard(2), Replicate()):
        d = tensor_mod.distribute_tensor(whole, mesh, [p])
        out[repr(p)] = (
            tuple(d.shape),
            tuple(d.size()),
            d.size(1),
            d.size(-1),
            d.numel(),
            d.nelement(),
            d.ndim,
            d.dim(),
            len(d),
            d.stride(),
            str(d.dtype).split(".")[-1],
            d.requires_grad,
            repr(d.placements),
            tuple(d.to_local().shape),
            type(d.to_local()).__name__,
        )
    small = tensor_mod.distribute_tensor(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), mesh, [Shard(0)])
    out["repr"] = repr(small).replace(lib, "torch")
    # an uneven piece described by from_local(shape=, stride=)
    rows = [(0, 3), (3, 5)][rank]
    piece = torch.tensor(WHOLE[rows[0] : rows[1]])
    uneven = DTensor.from_local(piece, mesh, [Shard(0)], shape=(5, 8, 3), stride=(24, 3, 1))
    out["from_local"] = (tuple(uneven.shape), uneven.stride(), uneven.full_tensor().numpy().copy())
    even = DTensor.from_local(torch.tensor(WHOLE[:, 4 * rank : 4 * rank + 4]), mesh, [Shard(1)])
    out["from_local_even"] = (tuple(even.shape), even.stride())
    # views in global sizes
    d1 = tensor_mod.distribute_tensor(torch.tensor(WHOLE), mesh, [Shard(1)])
    d0 = tensor_mod.distribute_tensor(torch.tensor(WHOLE[:4]), mesh, [Shard(0)])
    views = {
        "view_split": lambda: d1.view(5, 2, 4, 3),
        "view_infer": lambda: d1.view(5, 4, -1),
        "view_numpy_size": lambda: d0.view(np.int64(96)),
        "reshape_merge": lambda: d0.reshape(-1, 3),
        "flatten": lambda: d0.flatten(),
        "flatten_inner": lambda: d1.flatten(1),
        "unflatten": lambda: d1.unflatten(1, (4, 2)),
        "transpose": lambda: d1.transpose(0, 1),
        "permute": lambda: d1.permute(2, 0, 1),
        "unsqueeze": lambda: d1.unsqueeze(0),
        "squeeze": lambda: d1.unsqueeze(2).squeeze(2),
        "view_split_sharded": lambda: d0.view(2, 2, 8, 3),
        # the torch-namespace twins answer as the methods do
        "fn_reshape": lambda: torch.reshape(d0, (-1, 3)),
        "fn_reshape_keywords": lambda: torch.reshape(input=d0, shape=(8, 12)),
        "fn_flatten": lambda: torch.flatten(d0),
        "fn_flatten_inner": lambda: torch.flatten(d1, 1),
        "fn_unflatten": lambda: torch.unflatten(d1, 1, (4, 2)),
        "fn_unsqueeze": lambda: torch.unsqueeze(d1, 0),
        "fn_squeeze": lambda: torch.squeeze(d1.unsqueeze(2), 2),
    }
    for name, make in views.items():
        out[name] = _seen(make())
    out["split"] = [_seen(t) for t in d1.split(3, dim=2)]
    out["chunk"] = [_seen(t) for t in d1.chunk(2, dim=0)]
    out["split_sharded_dim"] = [_seen(t) for t in d1.split(4, dim=1)]
    out["fn_split"] = [_seen(t) for t in torch.split(d1, 3, dim=2)]
    out["fn_chunk"] = [_seen(t) for t in torch.chunk(d1, 2, dim=0)]
    dist.destroy_process_group()
    return out


@pytest.mark.parity
def test_metadata_and_views_match_pytorch(torch):
    ours = run_ranks(_metadata_worker, 2, args=("disttorch",), timeout=120)
    theirs = run_ranks(_metadata_worker, 2, args=("torch",), timeout=120)
    for rank, (mine, want) in enumerate(zip(ours, theirs)):
        assert mine.keys() == want.keys()
        for key in want:
            got, expected = mine[key], want[key]
            if key in ("from_local",):
                assert got[:2] == expected[:2], (rank, key)
                np.testing.assert_array_equal(got[2], expected[2])
            elif isinstance(expected, list):
                assert len(got) == len(expected), (rank, key)
                for g, e in zip(got, expected):
                    assert g[:3] == e[:3], (rank, key)
                    np.testing.assert_array_equal(g[3], e[3])
            elif isinstance(expected, tuple) and isinstance(expected[-1], np.ndarray):
                assert got[:3] == expected[:3], (rank, key)
                np.testing.assert_array_equal(got[3], expected[3])
            else:
                assert got == expected, (rank, key)


def _refusals_worker(rank: int, world: int) -> dict:
    _torch, dist = _init("disttorch")
    from disttorch.distributed.device_mesh import init_device_mesh
    from disttorch.distributed.tensor import Shard, distribute_tensor
    from disttorch.distributed.tensor.placement_types import _StridedShard

    mesh = init_device_mesh("cpu", (world,))
    uneven = distribute_tensor(_torch.tensor(WHOLE), mesh, [Shard(0)])  # 5 rows over 2 ranks
    inner = distribute_tensor(_torch.tensor(WHOLE), mesh, [Shard(1)])
    out = {}
    for name, make in {
        "merge_uneven": lambda: uneven.view(40, 3),
        "shard_not_leading": lambda: inner.reshape(40, 3),
        "bad_size": lambda: inner.view(7, -1),
        "strided": lambda: (
            distribute_tensor(_torch.tensor(WHOLE), mesh, [_StridedShard(0, split_factor=1)]) + 1
        ),
    }.items():
        try:
            make()
            out[name] = None
        except (NotImplementedError, RuntimeError) as e:
            out[name] = (type(e).__name__, str(e))
    dist.destroy_process_group()
    return out


def test_views_that_do_not_keep_the_sharding_are_refused_by_name():
    for out in run_ranks(_refusals_worker, 2, timeout=90):
        kind, message = out["merge_uneven"]
        assert kind == "NotImplementedError" and "View" in message and "Shard(dim=0)" in message
        kind, message = out["shard_not_leading"]
        assert kind == "NotImplementedError" and "Shard(dim=1)" in message and "[40, 3]" in message
        assert out["bad_size"] == ("RuntimeError", "shape '[7, -1]' is invalid for input of size 120")
        kind, message = out["strided"]
        assert (
            kind == "NotImplementedError"
            and "_StridedShard(dim=0, sf=1)" in message
            and "redistribute" in message
        )


def _fsdp_param_worker(rank: int, world: int, lib: str) -> dict:
    torch, dist = _init(lib)
    from importlib import import_module

    fully_shard = import_module(f"{lib}.distributed.fsdp").fully_shard
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3))
    fully_shard(model[0])
    fully_shard(model)
    out = {}
    for name, p in model.named_parameters():
        out[name] = (
            (type(p).__module__.replace(lib, "", 1), type(p).__name__, isinstance(p, torch.nn.Parameter)),
            tuple(p.shape),
            p.stride(),
            p.numel(),
            repr(p.placements),
            tuple(p.to_local().shape),
            tuple(p.device_mesh.shape),
        )
    with torch.device("meta"):  # built on the meta device, sharded, then materialised
        lazy = torch.nn.Linear(4, 3)
    fully_shard(lazy)
    out["meta"] = [(str(p.device), str(p.to_local().device)) for p in lazy.parameters()]
    lazy.to_empty(device="cpu")
    out["materialized"] = [
        (type(p).__name__, str(p.device), tuple(p.to_local().shape)) for p in lazy.parameters()
    ]
    options = import_module(f"{lib}.distributed.checkpoint.state_dict")
    state = options.get_model_state_dict(model)
    out["state_dict"] = {
        k: (repr(v.placements), tuple(v.shape), tuple(v.to_local().shape)) for k, v in state.items()
    }
    dist.destroy_process_group()
    return out


@pytest.mark.parity
def test_fully_shard_parameters_have_the_full_shape_as_in_pytorch(torch):
    ours = run_ranks(_fsdp_param_worker, 2, args=("disttorch",), timeout=120)
    theirs = run_ranks(_fsdp_param_worker, 2, args=("torch",), timeout=120)
    assert ours == theirs
    assert ours[1]["2.weight"][1:] == ((3, 5), (5, 1), 15, "(Shard(dim=0),)", (1, 5), (2,))
