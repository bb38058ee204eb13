"""A distributed checkpoint whose ``.metadata`` or piece files were crafted or damaged: every
load (``dcp.load``, ``dcp_to_torch_save``) fails with a ``ValueError`` naming the file and what
is wrong, before it fills a tensor with memory the checkpoint never held."""

from __future__ import annotations

import json
import os
import re
import shutil

import numpy as np
import pytest

import disttorch as dt
import disttorch.distributed.checkpoint as dcp
from disttorch.distributed.checkpoint.format_utils import dcp_to_torch_save


def _pieces(m):
    return m["tensors"]["w"]["pieces"]


CASES = {
    "a rank named by a path": (lambda m: _pieces(m)[0].__setitem__(0, "../x"), "is not one of rank 0..0's"),
    "a rank the save did not have": (lambda m: _pieces(m)[0].__setitem__(0, 7), "is not one of rank 0..0's"),
    "a negative size": (lambda m: _pieces(m)[0].__setitem__(2, [-3, 4]), "lying inside shape [3, 4]"),
    "a negative start": (lambda m: _pieces(m)[0].__setitem__(1, [-1, 0]), "lying inside shape [3, 4]"),
    "a piece larger than its file": (lambda m: _pieces(m)[0].__setitem__(2, [2**40, 4]), "lying inside"),
    "no pieces": (lambda m: m["tensors"]["w"].__setitem__("pieces", []), "does not hold every element"),
    "another dtype": (lambda m: m["tensors"]["w"].__setitem__("dtype", "float64"), "holds 48 bytes"),
    "a missing piece": (lambda m: _pieces(m)[0].__setitem__(3, 9), "piece 9 of rank 0 in"),
    "a list index of a terabyte": (lambda m: m["paths"].__setitem__("n", ["n", [2**40]]), "'paths' must"),
    "tensors not an object": (lambda m: m.__setitem__("tensors", []), "'tensors' and 'plain'"),
    "more files than ranks": (lambda m: m.__setitem__("save_ids", m["save_ids"] * 3), "'world_size' 1"),
    "an unknown dtype": (
        lambda m: m["tensors"]["w"].__setitem__("dtype", "flo@t32"),
        "unknown dtype 'flo@t32'",
    ),
    "not JSON": (b"\xff\x00garbage", "is not a distributed checkpoint's metadata"),
    "a pickle, as PyTorch's": (b"\x80\x04\x95garbage", "is a pickle, as PyTorch writes"),
    "JSON nested too deep": (b"[" * 100000 + b"]" * 100000, "is not a distributed checkpoint's metadata"),
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    directory = tmp_path_factory.mktemp("dcp") / "ck"
    dcp.save({"w": dt.arange(12.0).reshape(3, 4), "n": 5}, checkpoint_id=str(directory), no_dist=True)
    return directory


@pytest.mark.parametrize("case", list(CASES))
def test_a_crafted_metadata_file_is_refused_naming_it(case, saved, tmp_path):
    crafted = tmp_path / "ck"
    shutil.copytree(saved, crafted)
    change, says = CASES[case]
    if isinstance(change, bytes):
        (crafted / ".metadata").write_bytes(change)
    else:
        metadata = json.loads((crafted / ".metadata").read_text())
        change(metadata)
        (crafted / ".metadata").write_text(json.dumps(metadata))
    state = {"w": dt.full((3, 4), 7.0), "n": 0}
    with pytest.raises(ValueError, match=re.escape(str(crafted))) as info:
        dcp.load(state, checkpoint_id=str(crafted))
    assert says in str(info.value), str(info.value)
    np.testing.assert_array_equal(state["w"].numpy(), np.full((3, 4), 7.0))
    with pytest.raises(ValueError, match=re.escape(str(crafted))):
        dcp_to_torch_save(crafted, tmp_path / "out.pt")


def test_a_piece_file_that_is_not_one_is_refused_naming_it(saved, tmp_path):
    crafted = tmp_path / "ck"
    shutil.copytree(saved, crafted)
    os.unlink(crafted / "__0_0.distcp")
    np.save(crafted / "__0_0.distcp", np.zeros(3))
    os.rename(crafted / "__0_0.distcp.npy", crafted / "__0_0.distcp")
    with pytest.raises(ValueError, match="__0_0.distcp is not a piece file"):
        dcp.load({"w": dt.zeros(3, 4), "n": 0}, checkpoint_id=str(crafted))


def test_a_tensor_of_a_terabyte_is_refused_before_memory_is_taken(saved, tmp_path):
    crafted = tmp_path / "ck"
    shutil.copytree(saved, crafted)
    metadata = json.loads((crafted / ".metadata").read_text())
    metadata["tensors"]["w"]["shape"] = [2**20, 2**20]
    metadata["tensors"]["w"]["pieces"] = [[0, [0, 0], [2**20, 2**20], 0]]
    (crafted / ".metadata").write_text(json.dumps(metadata))
    with pytest.raises(
        ValueError, match=r"holds 48 bytes; the metadata says \[1048576, 1048576\] of float32"
    ):
        dcp_to_torch_save(crafted, tmp_path / "out.pt")


def test_a_bit_flipped_piece_file_is_refused_naming_it_or_loads_unchanged(saved, tmp_path):
    """One bit flipped anywhere in a piece file: its members' CRC-32 and headers catch it
    with an error naming the checkpoint (zipfile's BadZipFile, EOFError, NotImplementedError
    escaped, naming nothing), or the flip fell where nothing is read."""
    blob = (saved / "__0_0.distcp").read_bytes()
    rng = np.random.default_rng(0)
    outcomes = {"refused": 0, "loaded": 0}
    for n, (pos, bit) in enumerate(zip(rng.integers(0, len(blob), 120), rng.integers(0, 8, 120))):
        crafted = tmp_path / f"ck{n}"
        shutil.copytree(saved, crafted)
        damaged = bytearray(blob)
        damaged[pos] ^= 1 << int(bit)
        (crafted / "__0_0.distcp").write_bytes(bytes(damaged))
        state = {"w": dt.zeros(3, 4), "n": 0}
        try:
            dcp.load(state, checkpoint_id=str(crafted))
        except (ValueError, RuntimeError) as exc:
            assert str(crafted) in str(exc), f"byte {pos}: {type(exc).__name__}: {exc}"
            outcomes["refused"] += 1
            continue
        assert state["n"] == 5 and state["w"].tolist() == dt.arange(12.0).reshape(3, 4).tolist(), pos
        outcomes["loaded"] += 1
    assert outcomes["refused"] > 0, outcomes
