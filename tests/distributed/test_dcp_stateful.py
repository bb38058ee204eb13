"""``dcp.save``/``dcp.async_save``/``dcp.load`` of ``Stateful`` values (the distributed-checkpoint recipe's
``AppState`` wrapper around an FSDP model and its optimiser, through ``get_state_dict`` and
``set_state_dict``, on two real ranks, saved in the background over a gloo group of its own
while training goes on) and ``format_utils``' conversions to and from ``torch.save``."""

from __future__ import annotations

import pytest

from dist_helpers import run_ranks


def _app_state(rank: int, world: int, directory: str) -> dict:
    from concurrent.futures import Future

    import disttorch as torch
    import disttorch.distributed as dist
    import disttorch.distributed.checkpoint as dcp
    from disttorch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
    from disttorch.distributed.checkpoint.stateful import Stateful
    from disttorch.distributed.fsdp import FullyShardedDataParallel as FSDP

    class AppState(Stateful):
        def __init__(self, model, optimizer):
            self.model, self.optimizer = model, optimizer

        def state_dict(self):
            model_sd, optim_sd = get_state_dict(self.model, self.optimizer)
            return {"model": model_sd, "optim": optim_sd}

        def load_state_dict(self, state_dict):
            set_state_dict(
                self.model,
                self.optimizer,
                model_state_dict=state_dict["model"],
                optim_state_dict=state_dict["optim"],
            )

    def build(seed):
        torch.manual_seed(seed)
        model = FSDP(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2)))
        return model, torch.optim.Adam(model.parameters(), lr=0.1)

    dist.init_process_group("gloo")
    model, opt = build(0)
    model(torch.ones(3, 4)).sum().backward()
    opt.step()
    # the async-checkpoint recipe's call: a future of the metadata, the files written by a
    # background thread over the checkpoint's own group
    saved = [p.detach().clone() for p in model.parameters()]
    future = dcp.async_save(
        {"app": AppState(model, opt), "step": 7},
        checkpoint_id=directory,
        process_group=dist.new_group(backend="gloo"),
    )
    for _ in range(3):  # the state changes at once, training's collectives beside the save's
        model(torch.ones(3, 4)).sum().backward()
        opt.step()
    future.result()
    fresh, fresh_opt = build(1)
    state = {"app": AppState(fresh, fresh_opt), "step": 0}
    dcp.load(state, checkpoint_id=directory)
    out = {
        "future": (isinstance(future, Future), future.done(), sorted(future.result()["tensors"])[:1]),
        "params": all(torch.equal(a, b) for a, b in zip(saved, fresh.parameters())),
        "optim steps": [float(s["step"]) for s in fresh_opt.state_dict()["state"].values()],
        "step": state["step"],
        "stateful": (isinstance(state["app"], Stateful), isinstance(object(), Stateful)),
    }
    wrapped = fresh.state_dict(keep_vars=True)  # the wrapper's own keys load too
    out["wrapper keys"] = str(fresh.load_state_dict({k: v.detach() * 0 for k, v in wrapped.items()}))
    out["zeroed"] = all(float(p.abs().sum()) == 0 for p in fresh.parameters())
    try:  # a key only rank 1 asks for: every rank raises, naming rank 1's failure (PyTorch's planner)
        dcp.load(
            {"step": 0, **({"extra": torch.zeros(1)} if dist.get_rank() == 1 else {})},
            checkpoint_id=directory,
        )
    except dcp.CheckpointException as error:
        out["load failure"] = {rank: str(exc) for rank, (exc, _) in error.failures.items()}
    dist.destroy_process_group()
    return out


@pytest.mark.timeout(90)
def test_stateful_values_are_saved_and_loaded_through_their_own_state_dicts(tmp_path):
    for out in run_ranks(_app_state, 2, (str(tmp_path / "ckpt"),), timeout=75):
        assert out["future"] == (True, True, ["app.model.0.bias"])
        assert out["params"] and out["optim steps"] == [1.0, 1.0, 1.0, 1.0]
        assert out["step"] == 7 and out["stateful"] == (True, False)
        assert out["wrapper keys"] == "<All keys matched successfully>" and out["zeroed"]
        assert out["load failure"] == {1: "Missing key in checkpoint state_dict: extra."}


def test_format_utils_convert_both_ways_keeping_the_nesting(tmp_path):
    """``dcp_to_torch_save`` rebuilds the saved nesting (names with dots, int keys, lists,
    0-d tensors, plain values); ``torch_save_to_dcp`` writes what ``dcp.load`` reads back."""
    import disttorch as dt
    import disttorch.distributed.checkpoint as dcp
    from disttorch.distributed.checkpoint.format_utils import dcp_to_torch_save, torch_save_to_dcp

    state = {
        "app": {"model": {"net1.weight": dt.arange(6.0).reshape(2, 3), "net1.bias": dt.ones(2)}},
        "optim": {"state": {0: {"step": dt.tensor(3.0), "exp_avg": dt.full((2,), 0.5)}}, "lr": 0.1},
        "hist": [dt.zeros(1), 7],
    }
    dcp.save(state, checkpoint_id=tmp_path / "ckpt")
    dcp_to_torch_save(tmp_path / "ckpt", tmp_path / "whole.pt")
    whole = dt.load(tmp_path / "whole.pt")
    assert sorted(whole["app"]["model"]) == ["net1.bias", "net1.weight"]
    assert dt.equal(whole["app"]["model"]["net1.weight"], state["app"]["model"]["net1.weight"])
    assert list(whole["optim"]["state"]) == [0] and whole["optim"]["lr"] == 0.1
    assert whole["optim"]["state"][0]["step"].shape == () and float(whole["optim"]["state"][0]["step"]) == 3.0
    assert isinstance(whole["hist"], list) and whole["hist"][1] == 7
    torch_save_to_dcp(tmp_path / "whole.pt", tmp_path / "again")
    template = {"app": {"model": {"net1.weight": dt.zeros(2, 3), "net1.bias": dt.zeros(2)}}}
    dcp.load(template, checkpoint_id=tmp_path / "again")
    assert dt.equal(template["app"]["model"]["net1.weight"], state["app"]["model"]["net1.weight"])


def test_plain_values_load_back_as_they_were_and_nothing_is_pickled(tmp_path):
    """``bytes`` (a data loader's pickled state, as torchtitan saves it), ``io.BytesIO``, tuples
    (``random.getstate()``: a list before, which ``random.setstate`` refuses), sets and NumPy's
    arrays and scalars (``np.random.get_state()``: the save failed, "not JSON serializable") load
    back as they were, as with PyTorch; the metadata holds them as tagged JSON, never a pickle,
    and a value of another type fails the save naming its key."""
    import io
    import json
    import random

    import numpy as np

    import disttorch as dt
    import disttorch.distributed.checkpoint as dcp
    from disttorch.distributed.checkpoint.format_utils import dcp_to_torch_save

    values = {
        "loader": b"\x80\x04state",
        "rng": random.getstate(),
        "np_rng": np.random.get_state(),
        "misc": ({1, 2}, frozenset({3}), {"k": (np.int64(5), np.float32(0.5))}, None),
    }
    dcp.save({"w": dt.ones(2), "buf": io.BytesIO(b"xyz"), **values}, checkpoint_id=tmp_path / "c")
    loaded = {"w": dt.zeros(2), "buf": io.BytesIO(b"old"), **dict.fromkeys(values)}
    dcp.load(loaded, checkpoint_id=tmp_path / "c")
    assert loaded["buf"].getvalue() == b"xyz" and repr({k: loaded[k] for k in values}) == repr(values)
    random.setstate(loaded["rng"])
    dcp_to_torch_save(tmp_path / "c", tmp_path / "whole.pt")
    assert dt.load(tmp_path / "whole.pt", weights_only=False)["loader"] == b"\x80\x04state"
    metadata = tmp_path / "c" / ".metadata"
    crafted = json.loads(metadata.read_text())
    crafted["plain"]["loader"] = {"numpy": ["|O", "", [1]]}  # an array of Python objects
    metadata.write_text(json.dumps(crafted))
    with pytest.raises(ValueError, match="plain value 'loader' is malformed"):
        dcp.load({"loader": None}, checkpoint_id=tmp_path / "c")
    with pytest.raises(dcp.CheckpointException, match="'obj' holds a value of type object"):
        dcp.save({"obj": object()}, checkpoint_id=tmp_path / "d")


def test_plain_values_of_every_kind_and_loose_tags_refused(tmp_path):
    """A structured NumPy array keeps its fields (it came back as raw bytes) and a
    ``bytearray`` stays one; a dict keyed by a tuple, ``frozenset`` or negative ``int`` saves
    (the save failed 'frozenset is not JSON serializable', and a negative key's checkpoint was
    refused on load); a tag of another form or with other fields is refused naming its key."""
    import json

    import numpy as np

    import disttorch as dt
    import disttorch.distributed.checkpoint as dcp

    values = {
        "rec": np.array([(1.5, 2)], dtype=[("a", "<f4"), ("b", "<i2")]),
        "buf": bytearray(b"ab"),
        "keys": {(1, 2): "t", frozenset({3}): "f", -1: "n"},
    }
    dcp.save({"w": dt.ones(1), **values}, checkpoint_id=tmp_path / "c")
    loaded = {"w": dt.zeros(1), "rec": None, "buf": None, "keys": dict.fromkeys(values["keys"])}
    dcp.load(loaded, checkpoint_id=tmp_path / "c")
    assert loaded["rec"].dtype == values["rec"].dtype and loaded["rec"].tolist() == [(1.5, 2)]
    assert type(loaded["buf"]) is bytearray and loaded["keys"] == values["keys"]
    metadata = tmp_path / "c" / ".metadata"
    crafted = json.loads(metadata.read_text())
    for bad in ({"tuple": "abc"}, {"bytes": "", "tuple": []}, {"set": [], "frozen": "yes"}):
        crafted["plain"]["buf"] = bad  # (each loaded before: ('a', 'b', 'c'), b'', a frozenset)
        metadata.write_text(json.dumps(crafted))
        with pytest.raises(ValueError, match="plain value 'buf' is malformed"):
            dcp.load({"buf": None}, checkpoint_id=tmp_path / "c")


def test_deprecated_save_state_dict_and_load_state_dict(tmp_path):
    """The first DCP recipe's calls: ``save_state_dict(storage_writer=FileSystemWriter(...))``
    and ``load_state_dict(..., no_dist=True)``, each with PyTorch's FutureWarning, and
    PyTorch's file names."""
    import os

    import disttorch as torch
    import disttorch.distributed.checkpoint as dcp

    saved = {"model": torch.nn.Linear(3, 2).state_dict()}
    with pytest.warns(FutureWarning, match="`save_state_dict` is deprecated"):
        dcp.save_state_dict(
            state_dict=saved, storage_writer=dcp.FileSystemWriter(str(tmp_path), cache_staged_state_dict=True)
        )
    assert sorted(os.listdir(tmp_path)) == [".metadata", "__0_0.distcp"]
    loaded = {"model": torch.nn.Linear(3, 2).state_dict()}
    with pytest.warns(FutureWarning, match="`load_state_dict` is deprecated"):
        dcp.load_state_dict(
            state_dict=loaded, storage_reader=dcp.FileSystemReader(str(tmp_path)), no_dist=True
        )
    for key, value in saved["model"].items():
        assert torch.equal(loaded["model"][key], value)


def _save_over_a_background_save(rank: int, world: int, directory: str) -> dict:
    import disttorch as torch
    import disttorch.distributed as dist
    import disttorch.distributed.checkpoint as dcp

    dist.init_process_group("gloo")
    state = {"w": torch.ones(4_000_000)}
    future = dcp.async_save(state, checkpoint_id=directory, process_group=dist.new_group(backend="gloo"))
    # the next save into the same directory, while the background one writes (it removed the
    # background writer's temporary file: "could not write ...: No such file or directory")
    dcp.save({"w": state["w"] + 1}, checkpoint_id=directory)
    future.result()
    after_save = {"w": torch.zeros(4_000_000)}
    dcp.load(after_save, checkpoint_id=directory)
    state["w"] += 2  # staged: the background save still writes ones
    future = dcp.async_save(state, checkpoint_id=directory, process_group=dist.new_group(backend="gloo"))
    after_async = {"w": torch.zeros(4_000_000)}
    dcp.load(after_async, checkpoint_id=directory)  # waits for it
    dist.destroy_process_group()
    return {"saved": float(after_save["w"].sum()), "async": float(after_async["w"].sum())}


@pytest.mark.timeout(60)
def test_a_save_or_load_waits_for_the_background_saves_into_its_directory(tmp_path):
    (out,) = run_ranks(_save_over_a_background_save, 1, (str(tmp_path / "ckpt"),), timeout=45)
    assert out == {"saved": 8_000_000.0, "async": 12_000_000.0}


def _a_value_the_copy_refuses(rank: int, world: int, directory: str) -> dict:
    import os
    import threading

    import disttorch as torch
    import disttorch.distributed as dist
    import disttorch.distributed.checkpoint as dcp

    dist.init_process_group("gloo")
    state = {"w": torch.ones(3), **({"lock": threading.Lock()} if rank == 0 else {})}  # rank 0's own key
    future = dcp.async_save(state, checkpoint_id=directory, process_group=dist.new_group(backend="gloo"))
    total = torch.ones(2)
    dist.all_reduce(total)  # training goes on beside the save (it hung here on rank 0)
    error = future.exception(timeout=20)
    failed = {r: type(e).__name__ for r, (e, _) in error.failures.items()}
    out = {
        "error": (type(error).__name__, failed),
        "total": float(total[0]),
        "metadata": ".metadata" in os.listdir(directory),
    }
    # a key of one rank's own (a tensor, a value) is saved by that rank, as PyTorch saves it
    dcp.save(
        {"w": torch.ones(3), f"rank{rank}": torch.full((2,), rank + 7.0), f"step{rank}": rank},
        checkpoint_id=directory,
    )
    theirs = {f"rank{1 - rank}": torch.zeros(2), f"step{1 - rank}": -1}
    dcp.load(theirs, checkpoint_id=directory)
    out["theirs"] = {k: v.tolist() if isinstance(v, torch.Tensor) else v for k, v in theirs.items()}
    dist.destroy_process_group()
    return out


@pytest.fixture(scope="module")
def copy_refused(tmp_path_factory) -> list:
    directory = tmp_path_factory.mktemp("dcp") / "ckpt"
    directory.mkdir()
    return run_ranks(_a_value_the_copy_refuses, 2, (str(directory),), timeout=45)


@pytest.mark.timeout(60)
def test_a_rank_whose_copy_fails_fails_every_ranks_future_and_training_goes_on(copy_refused):
    """The copy ``async_save`` makes of a value ``deepcopy`` refuses (a lock) on rank 0: every
    rank's future raises ``CheckpointException`` naming it (it raised from rank 0's call
    alone, the others waiting in the save for ever and training's next collective with them)."""
    for out in copy_refused:
        assert {k: out[k] for k in ("error", "total", "metadata")} == {
            "error": ("CheckpointException", {0: "TypeError"}),
            "total": 2.0,
            "metadata": False,
        }


def test_a_key_only_one_rank_holds_is_saved_by_it(copy_refused):
    # (rank 1's was recorded in the metadata without its piece, and its plain value dropped)
    for rank, out in enumerate(copy_refused):
        assert out["theirs"] == {f"rank{1 - rank}": [8.0 - rank] * 2, f"step{1 - rank}": 1 - rank}
