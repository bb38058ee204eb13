"""A DTensor through ``torch.save``/``torch.load``, ``pickle`` and ``copy.deepcopy``, as in
PyTorch: a ``fully_shard`` parameter or state dict comes back as a DTensor (the local piece,
mesh, placements, global shape and strides), with ``weights_only`` True (once
``torch.distributed.tensor`` is imported, else PyTorch's error) or False, in a job with a
process group (its mesh usable at once) or without one; a sharded model refuses deepcopy as
PyTorch's does. Each is compared with PyTorch's (gloo, CPU) on 2 ranks."""

from __future__ import annotations

import pytest

from dist_helpers import run_ranks

LIBS = ("disttorch", "torch")


def _lib(lib: str):
    if lib == "torch":
        import torch
    else:
        import disttorch as torch
    return torch


def _seen(d, original) -> tuple:
    """What a loaded or copied DTensor says of itself, next to the one it came from."""
    return (
        type(d).__name__,
        tuple(d.shape),
        d.stride(),
        repr(d.placements),
        tuple(d.to_local().shape),
        d.requires_grad,
        bool((d.to_local().detach().numpy() == original.to_local().detach().numpy()).all()),
        d.device_mesh == original.device_mesh,
    )


def _save_worker(rank: int, world: int, lib: str, directory: str) -> dict:
    import copy
    import io
    import pickle
    from importlib import import_module

    torch = _lib(lib)
    torch.distributed.init_process_group(*(["gloo"] if lib == "torch" else []))
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    import_module(f"{lib}.distributed.fsdp").fully_shard(model)
    w = model.weight
    out = {}
    for name, obj in (("weight", w), ("state", model.state_dict())):
        buf = io.BytesIO()
        torch.save(obj, buf)
        with open(f"{directory}/{lib}-{name}{rank}.pt", "wb") as f:
            f.write(buf.getvalue())
        for weights_only in (True, False):
            buf.seek(0)
            loaded = torch.load(buf, weights_only=weights_only)
            d = loaded if name == "weight" else loaded["weight"]
            out[name, weights_only] = _seen(d, w)
            # its mesh works at once: the whole gathered over the ranks
            whole = d.full_tensor().detach().numpy()
            out[name, weights_only, "whole"] = bool((whole == w.full_tensor().detach().numpy()).all())
    model.load_state_dict(torch.load(f"{directory}/{lib}-state{rank}.pt"))
    copied = copy.deepcopy(w)
    out["deepcopy"] = _seen(copied, w)
    with torch.no_grad():
        copied.to_local().add_(1)
    out["deepcopy shares no memory"] = not (copied.to_local() == w.to_local()).any().item()
    out["pickle"] = _seen(pickle.loads(pickle.dumps(w)), w)
    try:
        copy.deepcopy(model)
    except AssertionError as e:
        out["deepcopy model"] = str(e)
    torch.distributed.destroy_process_group()
    return out


def _load_worker(rank: int, world: int, lib: str, path: str) -> list:
    """Loads without a process group: weights_only refused until the DTensor package is
    imported (PyTorch's words), then the piece, mesh and layout as saved."""
    from importlib import import_module

    torch = _lib(lib)
    out = []
    try:
        torch.load(path, weights_only=True)
    except Exception as e:
        out.append((type(e).__name__, str(e).replace(lib, "torch")))
    import_module(f"{lib}.distributed.tensor")
    for weights_only in (True, False):
        d = torch.load(path, weights_only=weights_only)
        out.append(
            (type(d).__name__, tuple(d.shape), repr(d.placements), tuple(d.to_local().shape), d.requires_grad)
        )
        out.append((tuple(d.device_mesh.shape), d.device_mesh.mesh.tolist()))
    return out


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("dtensor_pickle"))
    return directory, run_ranks(_save_worker, 2, args=("disttorch", directory), timeout=120)


def test_a_dtensor_saves_loads_pickles_and_copies_as_a_dtensor(saved):
    _, ranks = saved
    for rank, out in enumerate(ranks):
        piece = (2, 4) if rank == 0 else (1, 4)
        for name in ("weight", "state"):
            for weights_only in (True, False):
                want = ("DTensor", (3, 4), (4, 1), "(Shard(dim=0),)", piece, name == "weight", True, True)
                assert out[name, weights_only] == want
                assert out[name, weights_only, "whole"]
        assert out["deepcopy"] == out["pickle"] == out["weight", True]
        assert out["deepcopy shares no memory"]
        assert (
            out["deepcopy model"]
            == "FSDP does not support deepcopy. Please use state dict for serialization."
        )


def test_a_saved_dtensor_loads_without_a_process_group(saved):
    directory, _ = saved
    (out,) = run_ranks(_load_worker, 1, args=("disttorch", f"{directory}/disttorch-weight0.pt"), timeout=60)
    refused = (
        "UnpicklingError",
        "Weights only load failed. ``torch.distributed.tensor`` must be imported to load DTensors\n In PyTorch "
        "2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to `True`. "
        "Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in "
        "arbitrary code execution. Do it only if you got the file from a trusted source.\n",
    )
    loaded = ("DTensor", (3, 4), "(Shard(dim=0),)", (2, 4), True)
    assert out == [refused, loaded, ((2,), [0, 1]), loaded, ((2,), [0, 1])]


@pytest.mark.parity
def test_pickling_a_dtensor_is_as_in_pytorch(torch, saved):
    directory, ours = saved
    theirs = run_ranks(_save_worker, 2, args=("torch", directory), timeout=120)
    assert ours == theirs
    loads = [
        run_ranks(_load_worker, 1, args=(lib, f"{directory}/{lib}-weight1.pt"), timeout=60) for lib in LIBS
    ]
    assert loads[0] == loads[1]


def _reinit_worker(rank: int, world: int) -> bool:
    """A DTensor pickled in one process group and loaded after it was destroyed and another
    made: its mesh is made anew (the old mesh's groups are gone) and works."""
    import pickle

    import disttorch as torch
    from disttorch.distributed.tensor import Shard, distribute_tensor, init_device_mesh

    torch.distributed.init_process_group()
    d = distribute_tensor(torch.arange(6.0), init_device_mesh("cpu", (2,)), [Shard(0)])
    data = pickle.dumps(d)
    torch.distributed.destroy_process_group()
    torch.distributed.init_process_group()
    loaded = pickle.loads(data)
    whole = loaded.full_tensor().tolist()
    torch.distributed.destroy_process_group()
    return loaded.device_mesh is not d.device_mesh and whole == list(range(6))


def test_a_dtensor_loaded_in_a_new_process_group_gets_a_new_mesh():
    assert run_ranks(_reinit_worker, 2, timeout=60) == [True, True]
