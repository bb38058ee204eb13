"""``FileSystemReader(path).read_metadata()``: what a checkpoint holds, as PyTorch's
``torch.distributed.checkpoint.metadata`` classes describe it (keys, sizes, dtypes, each
rank's chunk, plain values as ``BytesStorageMetadata``, each key's path in ``planner_data``)."""

from __future__ import annotations

import pytest

import disttorch as dt
import disttorch.distributed.checkpoint as dcp
from disttorch.distributed.checkpoint.metadata import (
    BytesStorageMetadata,
    ChunkStorageMetadata,
    Metadata,
    TensorStorageMetadata,
)

from dist_helpers import run_ranks


def _state(lib) -> dict:
    return {
        "model": {
            "w": lib.arange(6.0).reshape(2, 3),
            "step": lib.tensor(3.0),
            "h": lib.ones(2, dtype=lib.float16),
        },
        "optim": {"param_groups": [{"lr": 0.1, "params": [0]}]},
        "epoch": 4,
    }


def _described(md) -> dict:
    """The metadata as plain values, comparable between disttorch and PyTorch."""
    out = {}
    for key, entry in md.state_dict_metadata.items():
        if type(entry).__name__ == "TensorStorageMetadata":
            chunks = [(tuple(c.offsets), tuple(c.sizes)) for c in entry.chunks]
            out[key] = (str(entry.properties.dtype).rsplit(".", 1)[-1], tuple(entry.size), chunks)
        else:
            out[key] = type(entry).__name__
    return out


def test_read_metadata_describes_tensors_values_and_paths(tmp_path):
    dcp.save(_state(dt), checkpoint_id=tmp_path)
    reader = dcp.FileSystemReader(tmp_path)
    md = reader.read_metadata()
    assert isinstance(md, Metadata) and reader.checkpoint_id == tmp_path
    w = md.state_dict_metadata["model.w"]
    assert isinstance(w, TensorStorageMetadata) and w.size == dt.Size([2, 3])
    assert w.chunks == [ChunkStorageMetadata(dt.Size([0, 0]), dt.Size([2, 3]))]
    assert w.properties.dtype is dt.float32 and w.properties.layout is dt.strided
    assert md.state_dict_metadata["model.step"].chunks == [ChunkStorageMetadata(dt.Size([]), dt.Size([]))]
    assert isinstance(md.state_dict_metadata["epoch"], BytesStorageMetadata)
    assert md.planner_data["optim.param_groups.0.lr"] == ("optim", "param_groups", 0, "lr")
    assert _described(md) == {
        "model.w": ("float32", (2, 3), [((0, 0), (2, 3))]),
        "model.step": ("float32", (), [((), ())]),
        "model.h": ("float16", (2,), [((0,), (2,))]),
        "optim.param_groups.0.lr": "BytesStorageMetadata",
        "optim.param_groups.0.params": "BytesStorageMetadata",
        "epoch": "BytesStorageMetadata",
    }


def test_read_metadata_is_pytorchs(tmp_path, torch):
    import torch.distributed.checkpoint  # noqa: F401 - a submodule PyTorch does not import itself

    dcp.save(_state(dt), checkpoint_id=tmp_path / "ours")
    torch.distributed.checkpoint.save(_state(torch), checkpoint_id=tmp_path / "theirs", no_dist=True)
    ours = dcp.FileSystemReader(tmp_path / "ours").read_metadata()
    theirs = torch.distributed.checkpoint.FileSystemReader(tmp_path / "theirs").read_metadata()
    assert _described(ours) == _described(theirs)
    assert ours.planner_data == theirs.planner_data


def test_read_metadata_of_a_directory_without_a_checkpoint(tmp_path):
    with pytest.raises(FileNotFoundError, match="no .metadata file"):
        dcp.FileSystemReader(tmp_path).read_metadata()


def sharded_metadata(rank: int, ws: int, path: str) -> list:
    import disttorch
    import disttorch.distributed as dist
    from disttorch.distributed.tensor import Shard, distribute_tensor, init_device_mesh

    dist.init_process_group()
    mesh = init_device_mesh("cpu", (ws,))
    w = distribute_tensor(disttorch.arange(15.0).reshape(5, 3), mesh, [Shard(0)])
    dcp.save({"w": w}, checkpoint_id=path)
    chunks = dcp.FileSystemReader(path).read_metadata().state_dict_metadata["w"].chunks
    dist.destroy_process_group()
    return [(tuple(c.offsets), tuple(c.sizes)) for c in chunks]


@pytest.mark.timeout(60)
def test_read_metadata_lists_every_ranks_chunk(tmp_path):
    for chunks in run_ranks(sharded_metadata, 2, args=(str(tmp_path),), timeout=45):
        assert chunks == [((0, 0), (3, 3)), ((3, 0), (2, 3))]
