"""The ``FullyShardedDataParallel`` wrapper's ``SHARDED_STATE_DICT`` and ``LOCAL_STATE_DICT``
on real processes: ``ShardedTensor`` values whose shards and metadata are those PyTorch
2.13's FSDP1 gives for the same model on 2 gloo ranks (measured with
``torch.distributed.run``; ``use_orig_params=True``), saved and loaded through
``distributed.checkpoint`` and loaded back with ``load_state_dict``; ``LOCAL_STATE_DICT`` as
PyTorch's (one ``_flat_param`` per unit, and each parameter's slice of it with
``use_orig_params=True``), loaded back by ``load_state_dict`` (after ``torch.save`` and
``torch.load`` too), refused by another rank or world size as PyTorch's; ranks that wrapped
other modules are refused at the first forward."""

from __future__ import annotations

import io

import pytest

from dist_helpers import run_ranks

# PyTorch's: key -> (size, every shard's (offsets, sizes, placement))
PYTORCH_METADATA = {
    "0.weight": ((5, 3), [([0, 0], [3, 3], "rank:0/cpu"), ([3, 0], [2, 3], "rank:1/cpu")]),
    "0.bias": ((5,), [([0], [3], "rank:0/cpu"), ([3], [2], "rank:1/cpu")]),
    "2.weight": ((1, 5), [([0, 0], [1, 5], "rank:0/cpu")]),
    "2.bias": ((1,), [([0], [1], "rank:0/cpu")]),
}


def _worker(rank: int, world: int, directory: str) -> dict:
    import disttorch as torch
    import disttorch.distributed.checkpoint as dcp
    from disttorch.distributed._shard.sharded_tensor import ShardedTensor
    from disttorch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from disttorch.distributed.fsdp import StateDictType
    from disttorch.distributed.fsdp.wrap import ModuleWrapPolicy

    torch.distributed.init_process_group()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.ReLU(), torch.nn.Linear(5, 1))
    f = FSDP(model, use_orig_params=True)
    before = [p.detach().full_tensor().numpy().copy() for p in f.parameters()]

    def restored() -> bool:
        return all((p.detach().full_tensor().numpy() == b).all() for p, b in zip(f.parameters(), before))

    with FSDP.state_dict_type(f, StateDictType.SHARDED_STATE_DICT):
        sd = f.state_dict()
    out = {
        "types": {k: isinstance(v, ShardedTensor) for k, v in sd.items()},
        "metadata": {
            k: (
                tuple(v.size()),
                [(m.shard_offsets, m.shard_sizes, str(m.placement)) for m in v.metadata().shards_metadata],
            )
            for k, v in sd.items()
        },
        "local": {
            k: [(s.metadata.shard_offsets, tuple(s.tensor.shape)) for s in v.local_shards()]
            for k, v in sd.items()
        },
        "dtype": sd["0.weight"].dtype is torch.float32,
    }
    dcp.save(sd, checkpoint_id=directory)
    with torch.no_grad():
        for p in f.parameters():
            p.mul_(0)
    with FSDP.state_dict_type(f, StateDictType.SHARDED_STATE_DICT):
        fresh = f.state_dict()
        dcp.load(fresh, checkpoint_id=directory)
        f.load_state_dict(fresh)
    out["dcp_restored"] = restored()
    nn = torch.nn
    wrapped = FSDP(
        nn.Sequential(
            nn.Linear(3, 5),
            nn.BatchNorm1d(5),
            nn.Sequential(nn.Linear(5, 3), nn.ReLU()),
            nn.Linear(3, 2, bias=False),
        ),
        auto_wrap_policy=ModuleWrapPolicy({nn.Linear}),
    )
    out["flat"], out["local_restored"] = [], []
    for model in (f, wrapped):
        whole = [p.detach().full_tensor().numpy().copy() for p in model.parameters()]
        with FSDP.state_dict_type(model, StateDictType.LOCAL_STATE_DICT):
            local = model.state_dict()
            out["flat"].append({k: _layout(v) for k, v in local.items()})
            if model is wrapped:  # through torch.save and torch.load, as PyTorch's ShardedTensor goes
                buffer = io.BytesIO()
                torch.save(local, buffer)
                buffer.seek(0)
                local = torch.load(buffer, weights_only=False)
            with torch.no_grad():
                for p in model.parameters():
                    p.add_(1)
            model.load_state_dict(local)
        out["local_restored"].append(
            all((p.detach().full_tensor().numpy() == w).all() for p, w in zip(model.parameters(), whole))
        )
    # a sharded state dict saved by one rank and loaded by another, or in another world size,
    # is refused as PyTorch's refuses it (its shard would land in another rank's place)
    with FSDP.state_dict_type(f, StateDictType.SHARDED_STATE_DICT):
        sd = f.state_dict()
        torch.save(sd, f"{directory}/rank{rank}.pt")
        torch.distributed.barrier()
        out["refused"] = []
        try:
            torch.load(f"{directory}/rank{1 - rank}.pt", weights_only=False)
            out["refused"].append("loaded")
        except RuntimeError as e:
            out["refused"].append(str(e))
        state = {**sd["0.weight"].__getstate__(), "_saved_by": (rank, 3)}  # as if saved by 3 ranks
        try:
            ShardedTensor.__new__(ShardedTensor).__setstate__(state)
            out["refused"].append("loaded")
        except RuntimeError as e:
            out["refused"].append(str(e))
    # ranks that wrapped different modules of one size would each build their parameters from
    # the others' shards: refused at the first forward, on every rank
    import functools

    from disttorch.distributed.fsdp.wrap import lambda_auto_wrap_policy

    same = torch.nn.Sequential(*(torch.nn.Linear(4, 4) for _ in range(3)))
    pick = same[0] if rank == 0 else same[2]
    odd = FSDP(
        same, auto_wrap_policy=functools.partial(lambda_auto_wrap_policy, lambda_fn=lambda m: m is pick)
    )
    try:
        odd(torch.ones(1, 4))
        out["wrapping"] = "ran"
    except RuntimeError as e:
        out["wrapping"] = str(e)
    return out


def _layout(value) -> tuple:
    """A local state dict's value as the test compares it: a ShardedTensor's size and local
    shards (offsets, shape), a tensor's shape."""
    if hasattr(value, "local_shards"):
        return (
            tuple(value.size()),
            [(s.metadata.shard_offsets, tuple(s.tensor.shape)) for s in value.local_shards()],
        )
    return tuple(value.shape)


# PyTorch 2.13's LOCAL_STATE_DICT on 2 gloo ranks (rank 0's, then rank 1's) for the models of
# _worker: the first with use_orig_params=True, the second with units per Linear
PYTORCH_LOCAL = [
    [
        {
            "0.weight": (15,),
            "0.bias": (1,),
            "2.weight": (0,),
            "2.bias": (0,),
            "_flat_param": ((34,), [([0], (17,))]),
        },
        {
            "_flat_param": ((10,), [([0], (5,))]),
            "0._flat_param": ((20,), [([0], (10,))]),
            "1.running_mean": (5,),
            "1.running_var": (5,),
            "1.num_batches_tracked": (),
            "2.0._flat_param": ((18,), [([0], (9,))]),
            "3._flat_param": ((6,), [([0], (3,))]),
        },
    ],
    [
        {
            "0.weight": (0,),
            "0.bias": (4,),
            "2.weight": (5,),
            "2.bias": (1,),
            "_flat_param": ((34,), [([17], (17,))]),
        },
        {
            "_flat_param": ((10,), [([5], (5,))]),
            "0._flat_param": ((20,), [([10], (10,))]),
            "1.running_mean": (5,),
            "1.running_var": (5,),
            "1.num_batches_tracked": (),
            "2.0._flat_param": ((18,), [([9], (9,))]),
            "3._flat_param": ((6,), [([3], (3,))]),
        },
    ],
]


@pytest.fixture(scope="module")
def ranks(tmp_path_factory) -> list:
    return run_ranks(_worker, 2, args=(str(tmp_path_factory.mktemp("fsdp_sharded")),), timeout=120)


def test_sharded_state_dict_is_pytorchs_sharded_tensor(ranks):
    for rank, out in enumerate(ranks):
        assert all(out["types"].values())
        assert out["metadata"] == PYTORCH_METADATA
        assert out["dtype"]
        for key, (_, shards) in PYTORCH_METADATA.items():  # this rank's shard, if it holds one
            want = [(o, tuple(s)) for o, s, where in shards if where == f"rank:{rank}/cpu"]
            assert out["local"][key] == want


def test_a_sharded_state_dict_of_another_rank_or_world_size_is_refused_as_pytorchs(ranks):
    for rank, out in enumerate(ranks):
        other, world = out["refused"]
        assert other.startswith(f"Local rank at save time was {1 - rank}, but at load time was {rank}: "), (
            other
        )
        assert "save it with torch.distributed.checkpoint" in other
        assert world.startswith("Local world size at save time was 3, but at load time was 2"), world


def test_ranks_that_wrapped_other_modules_of_one_size_are_refused_naming_both(ranks):
    for rank, out in enumerate(ranks):
        said = out["wrapping"]
        assert said.startswith("FSDP: the ranks sharded the model differently: fully-sharded module 0"), said
        mine, theirs = (
            ("1.weight [4, 4]", "0.weight [4, 4]") if rank == 0 else ("0.weight [4, 4]", "1.weight [4, 4]")
        )
        assert (
            f"'(root)' ({mine} float32" in said and f"on rank {rank} but '(root)' ({theirs} float32" in said
        )


def test_sharded_state_dict_round_trips_through_dcp(ranks):
    assert all(out["dcp_restored"] for out in ranks)


def test_local_state_dict_is_pytorchs_flat_parameters(ranks):
    for out, want in zip(ranks, PYTORCH_LOCAL):
        for got, expected in zip(out["flat"], want):
            assert list(got.items()) == list(expected.items())  # the keys in PyTorch's order


def test_local_state_dict_round_trips_through_load_state_dict(ranks):
    assert all(all(out["local_restored"]) for out in ranks)
