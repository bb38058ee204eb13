"""``DefaultSavePlanner``/``DefaultLoadPlanner`` as ``save``/``load`` take them: PyTorch's
arguments, and ``allow_partial_load=True`` leaving keys the checkpoint lacks as they are."""

from __future__ import annotations

import pytest

import disttorch as dt
import disttorch.distributed.checkpoint as dcp


def _partial_load(lib, path, planner) -> tuple:
    checkpoint = lib.distributed.checkpoint
    checkpoint.save(
        {"a": lib.ones(2), "n": 3}, checkpoint_id=path, planner=checkpoint.DefaultSavePlanner(), no_dist=True
    )
    target = {"a": lib.zeros(2), "n": 0, "b": lib.full((2,), 7.0), "m": "kept"}
    checkpoint.load(target, checkpoint_id=path, planner=planner(checkpoint), no_dist=True)
    return target["a"].tolist(), target["n"], target["b"].tolist(), target["m"]


def test_allow_partial_load_leaves_keys_the_checkpoint_lacks(tmp_path):
    loaded = _partial_load(dt, tmp_path, lambda c: c.DefaultLoadPlanner(allow_partial_load=True))
    assert loaded == ([1.0, 1.0], 3, [7.0, 7.0], "kept")


def test_the_default_planner_refuses_keys_the_checkpoint_lacks(tmp_path):
    with pytest.raises(dcp.CheckpointException, match="Missing key in checkpoint state_dict: b"):
        _partial_load(dt, tmp_path, lambda c: c.DefaultLoadPlanner())


def test_partial_load_is_pytorchs(tmp_path, torch):
    import torch.distributed.checkpoint  # noqa: F401 - a submodule PyTorch does not import itself

    planner = lambda c: c.DefaultLoadPlanner(allow_partial_load=True)  # noqa: E731
    assert _partial_load(dt, tmp_path / "ours", planner) == _partial_load(torch, tmp_path / "theirs", planner)
