"""The ``FullyShardedDataParallel`` wrapper's ``SHARDED_STATE_DICT`` and ``LOCAL_STATE_DICT``
on real processes: ``ShardedTensor`` values whose shards and metadata are those PyTorch
2.13's FSDP1 gives for the same model on 2 gloo ranks (measured with
``torch.distributed.run``; ``use_orig_params=True``), saved and loaded through
``distributed.checkpoint`` and loaded back with ``load_state_dict``."""

from __future__ import annotations

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
    with FSDP.state_dict_type(f, StateDictType.LOCAL_STATE_DICT):
        local = f.state_dict()
        kept = {k: [s.tensor.clone() for s in v.local_shards()] for k, v in local.items()}
        with torch.no_grad():
            for p in f.parameters():
                p.add_(1)
        for k, v in local.items():
            for s, t in zip(v.local_shards(), kept[k]):
                s.tensor.copy_(t)
        f.load_state_dict(local)
    out["local_restored"] = restored()
    return out


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


def test_sharded_state_dict_round_trips_through_dcp(ranks):
    assert all(out["dcp_restored"] for out in ranks)


def test_local_state_dict_round_trips_through_load_state_dict(ranks):
    assert all(out["local_restored"] for out in ranks)
