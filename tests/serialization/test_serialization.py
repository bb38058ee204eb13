"""save/load: round trips, atomic writes, corrupt files, no code execution."""

import io
import os
import pickle

import numpy as np
import pytest

import disttorch as dt


def test_round_trip_of_nested_checkpoint(tmp_path):
    obj = {
        "model": {"w": dt.randn(3, 4), "b": dt.zeros(4, dtype=dt.float64)},
        "opt": {"state": {0: {"step": 3.0}}, "param_groups": [{"lr": 0.1, "params": [0]}]},
        "epoch": 7,
        "name": "run",
        "list": [dt.arange(5), (1, 2.5, None, True)],
        "rng": dt.get_rng_state(),
        "dtype": dt.int32,
    }
    dt.save(obj, tmp_path / "ck.pt")
    out = dt.load(tmp_path / "ck.pt")
    np.testing.assert_array_equal(out["model"]["w"].numpy(), obj["model"]["w"].numpy())
    assert out["model"]["b"].dtype == dt.float64 and out["list"][0].tolist() == [0, 1, 2, 3, 4]
    assert out["epoch"] == 7 and out["name"] == "run" and out["list"][1] == (1, 2.5, None, True)
    assert out["dtype"] is dt.int32 and out["opt"]["param_groups"][0]["lr"] == 0.1


def test_requires_grad_survives_and_file_objects_work():
    t = dt.randn(2, requires_grad=True)
    buf = io.BytesIO()
    dt.save([t], buf)
    buf.seek(0)
    (u,) = dt.load(buf)
    assert u.requires_grad and u.is_leaf


def test_truncated_and_corrupt_files_raise_clear_errors(tmp_path):
    path = tmp_path / "ck.pt"
    dt.save({"w": dt.randn(100)}, path)
    data = path.read_bytes()
    (tmp_path / "short.pt").write_bytes(data[: len(data) // 2])
    with pytest.raises(RuntimeError, match="corrupt or truncated"):
        dt.load(tmp_path / "short.pt")
    flipped = bytearray(data)
    at = data.index(np.float32(dt.load(path)["w"][3].item()).tobytes())  # inside the tensor's record
    flipped[at] ^= 0xFF
    (tmp_path / "flip.pt").write_bytes(bytes(flipped))
    with pytest.raises(RuntimeError, match="CRC-32"):
        dt.load(tmp_path / "flip.pt")
    (tmp_path / "other.pt").write_bytes(b"hello world, not a checkpoint at all..................")
    with pytest.raises(RuntimeError, match="not a PyTorch or disttorch checkpoint"):
        dt.load(tmp_path / "other.pt")


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


def test_load_refuses_code_by_default(tmp_path):
    dt.save({"x": _Evil()}, tmp_path / "evil.pt")
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        dt.load(tmp_path / "evil.pt")


def test_crash_during_save_leaves_previous_checkpoint_intact(tmp_path, monkeypatch):
    path = tmp_path / "ck.pt"
    dt.save({"v": dt.tensor([1.0])}, path)

    def boom(fd):
        raise OSError("disk died")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError, match="disk died"):
        dt.save({"v": dt.tensor([2.0])}, path)
    monkeypatch.undo()
    assert dt.load(path)["v"].item() == 1.0
    assert [p.name for p in tmp_path.iterdir()] == ["ck.pt"]


class _Pickled(dt.nn.Module):
    pass


@pytest.mark.parity
def test_weights_only_refusal_says_what_pytorchs_says(torch):
    messages = []
    for lib, module in ((dt, _Pickled()), (torch, torch.nn.Module())):
        buf = io.BytesIO()
        lib.save(module, buf)
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError) as info:
            lib.load(buf)
        messages.append(str(info.value))
    ours, theirs = messages
    own = f"{_Pickled.__module__}._Pickled"
    assert ours == theirs.replace("torch.nn.modules.module.Module", own).replace(
        "torch.serialization", "disttorch.serialization"
    )
