"""``dcp.save``/``dcp.load`` of nested dicts, lists and tuples, with and without tensors, as
PyTorch's: dicts are gone into, lists only when they hold a tensor (else kept whole, as one
key), tuples are kept whole (their tensors too); the keys are PyTorch's (its 2.13's, from
``FileSystemReader(path).read_metadata().state_dict_metadata``)."""

from __future__ import annotations

import pickle

import pytest

import disttorch as dt
import disttorch.distributed.checkpoint as dcp
from disttorch.distributed.checkpoint._format import read_metadata

PYTORCH_TENSOR_KEYS = ["a", "nested.lt.0"]
PYTORCH_VALUE_KEYS = [
    "nested.e",
    "nested.i",
    "nested.l",
    "nested.lt.1",
    "nested.n",
    "nested.t",
    "nested.tt",
    "top_list",
]


def _state() -> dict:
    return {
        "a": dt.arange(3.0),
        "nested": {
            "l": [1, 2, "x"],
            "lt": [dt.ones(2), 3],
            "t": (1, 2),
            "tt": (dt.zeros(1), "s"),
            "e": [],
            "n": None,
            "i": 5,
        },
        "top_list": [4, 5],
    }


def test_nested_lists_and_tuples_save_under_pytorchs_keys_and_load_back(tmp_path):
    dcp.save(_state(), checkpoint_id=tmp_path)
    metadata = read_metadata(str(tmp_path))
    assert sorted(metadata["tensors"]) == PYTORCH_TENSOR_KEYS
    assert sorted(metadata["plain"]) == PYTORCH_VALUE_KEYS
    lt = dt.zeros(2)
    target = {
        "a": dt.zeros(3),
        "nested": {"l": None, "lt": [lt, 0], "t": None, "tt": None, "e": None, "n": 1, "i": 0},
        "top_list": [0, 0],  # (a list without tensors: one value, replaced)
    }
    dcp.load(target, checkpoint_id=tmp_path)
    nested = target["nested"]
    assert target["a"].tolist() == [0.0, 1.0, 2.0] and target["top_list"] == [4, 5]
    assert nested["lt"][0] is lt and lt.tolist() == [1.0, 1.0] and nested["lt"][1] == 3
    assert (nested["l"], nested["t"], nested["e"], nested["n"], nested["i"]) == (
        [1, 2, "x"],
        (1, 2),
        [],
        None,
        5,
    )
    tensor, text = nested["tt"]
    assert isinstance(tensor, dt.Tensor) and tensor.dtype == dt.float32 and tensor.tolist() == [0.0]
    assert text == "s"


def test_a_sharded_tensor_unpickled_before_init_process_group_is_refused_as_pytorchs():
    from disttorch.distributed._shard.sharded_tensor import ShardedTensor

    blob = pickle.dumps(ShardedTensor([], None))
    with pytest.raises(
        RuntimeError, match='^Need to initialize default process group using "init_process_group"'
    ):
        pickle.loads(blob)
