"""Checkpointer files run no code: RNG states are plain arrays and numbers, load_latest
reads through the weights-only path, the `latest` pointer must name a file inside the
directory, and a file of another shape is refused naming it and what is wrong."""

import os
import pickle
import random

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn
from disttorch.utils.resume import Checkpointer


class _Evil:
    def __init__(self, target):
        self.target = target

    def __reduce__(self):
        return (os.system, (f"touch {self.target}",))


def _ckpt(directory):
    model = nn.Linear(3, 2)
    opt = dt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return Checkpointer(directory, model=model, optimizer=opt), model


def _plain(obj):
    """True if obj holds only tensors, numbers, strings, None and containers of them."""
    if isinstance(obj, dict):
        return all(isinstance(k, (str, int)) and _plain(v) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return all(_plain(v) for v in obj)
    return obj is None or isinstance(obj, (dt.Tensor, int, float, str, bool))


def test_checkpoint_holds_only_plain_data_and_restores_every_rng(tmp_path):
    ck, _ = _ckpt(tmp_path)
    dt.manual_seed(3)
    np.random.seed(4)
    random.seed(5)
    np.random.standard_normal()  # leaves a cached gaussian in NumPy's state
    path = ck.save(0, 0)
    data = dt.load(path)
    assert _plain(data["rng"]) and _plain(data["model"])
    want = (
        dt.rand(3).numpy().copy(),
        np.random.rand(3),
        [random.random() for _ in range(3)],
        np.random.standard_normal(),
    )
    dt.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    Checkpointer(tmp_path, model=nn.Linear(3, 2)).load_latest()
    got = (
        dt.rand(3).numpy(),
        np.random.rand(3),
        [random.random() for _ in range(3)],
        np.random.standard_normal(),
    )
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert got[2] == want[2] and got[3] == want[3]


@pytest.mark.parametrize("field", ["rng", "model", "optimizer", "extra"])
def test_malicious_checkpoint_is_refused_on_resume(field, tmp_path):
    target = tmp_path / "pwned"
    ck, _ = _ckpt(tmp_path / "ck")
    path = ck.save(0, 1)
    data = dt.load(path)
    data[field] = [_Evil(target)] if field == "rng" else {"x": _Evil(target)}
    dt.save(data, path)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        _ckpt(tmp_path / "ck")[0].load_latest()
    assert not target.exists()


def test_rng_states_of_earlier_versions_load_without_running_code(tmp_path):
    """Earlier checkpoints stored NumPy's and Python's RNG states as pickled bytes."""
    ck, _ = _ckpt(tmp_path)
    path = ck.save(0, 0)
    data = dt.load(path)
    np.random.seed(11)
    random.seed(12)

    def as_bytes(obj):
        return dt.tensor(list(pickle.dumps(obj)), dtype=dt.uint8)

    data["rng"] = [
        {
            "disttorch": data["rng"][0]["disttorch"],
            "numpy": as_bytes(np.random.get_state()),
            "python": as_bytes(random.getstate()),
        }
    ]
    want = np.random.rand(2), random.random()
    dt.save(data, path)
    np.random.seed(0)
    random.seed(0)
    _ckpt(tmp_path)[0].load_latest()
    np.testing.assert_array_equal(np.random.rand(2), want[0])
    assert random.random() == want[1]
    data["rng"][0]["python"] = dt.tensor(list(pickle.dumps(_Evil(tmp_path / "pwned"))), dtype=dt.uint8)
    dt.save(data, path)
    with pytest.raises(pickle.UnpicklingError):
        _ckpt(tmp_path)[0].load_latest()
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(
    "pointer",
    [
        "../outside.pt",
        "/etc/passwd",
        "sub/step-000000001.pt",
        "..",
        ".",
        "step-000000001.pt/../../outside.pt",
        "x" * 5000,
    ],
)
def test_latest_pointer_outside_the_directory_is_refused(pointer, tmp_path):
    d = tmp_path / "ck"
    ck, _ = _ckpt(d)
    ck.save(0, 1)
    (d / "sub").mkdir()
    os.link(d / "step-000000001.pt", d / "sub" / "step-000000001.pt")
    dt.save({"x": 1}, tmp_path / "outside.pt")
    (d / "latest").write_text(pointer)
    with pytest.raises(RuntimeError, match="refusing to follow it"):
        _ckpt(d)[0].load_latest()


def test_latest_symlink_leading_out_is_refused(tmp_path):
    d = tmp_path / "ck"
    ck, _ = _ckpt(d)
    ck.save(0, 1)
    dt.save({"x": 1}, tmp_path / "outside.pt")
    os.symlink(tmp_path / "outside.pt", d / "evil.pt")
    (d / "latest").write_text("evil.pt")
    with pytest.raises(RuntimeError, match="refusing to follow it"):
        _ckpt(d)[0].load_latest()


def test_links_planted_in_the_directory_are_replaced_not_written_through(tmp_path):
    d = tmp_path / "ck"
    d.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    os.symlink(victim, d / "latest")
    os.symlink(victim, d / "step-000000001.pt")
    ck, _ = _ckpt(d)
    ck.save(0, 1)
    assert victim.read_text() == "keep me"
    assert not os.path.islink(d / "latest") and not os.path.islink(d / "step-000000001.pt")
    _ckpt(d)[0].load_latest()


def test_valid_pointer_and_umask(tmp_path):
    old = os.umask(0o027)
    try:
        ck, model = _ckpt(tmp_path)
        path = ck.save(2, 5)
    finally:
        os.umask(old)
    for name in (os.path.basename(path), "latest"):
        assert os.stat(tmp_path / name).st_mode & 0o777 == 0o640
    assert (tmp_path / "latest").read_text() == os.path.basename(path)
    fresh, m2 = _ckpt(tmp_path)
    state = fresh.load_latest()
    assert (state.epoch, state.step) == (2, 5)
    np.testing.assert_array_equal(m2.weight.detach().numpy(), model.weight.detach().numpy())


def test_checkpoint_write_error_names_the_path(tmp_path, monkeypatch):
    ck, _ = _ckpt(tmp_path)

    def enospc(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", enospc)
    with pytest.raises(OSError, match="step-000000001.pt") as info:
        ck.save(0, 1)
    assert info.value.errno == 28


_KILLED_SAVE = """
import os, signal, sys
import disttorch as dt
from disttorch import nn
from disttorch.serialization import zip_writer
from disttorch.utils.resume import Checkpointer

def write_then_die(obj, out, protocol):
    out.write(b"PK half a checkpoint")
    out.flush()
    os.kill(os.getpid(), signal.SIGKILL)

ck = Checkpointer(sys.argv[1], model=nn.Linear(3, 2))
ck.load_latest()
zip_writer.write = write_then_die
ck.save(0, 1)
"""


def test_saves_killed_mid_write_leave_no_temporary_files_after_the_next_start(tmp_path):
    import subprocess
    import sys

    ck, _ = _ckpt(tmp_path)
    ck.save(0, 0)
    (tmp_path / ".notes.0123456789ab.tmp").write_text("not the checkpointer's")
    for _ in range(4):
        run = subprocess.run([sys.executable, "-c", _KILLED_SAVE, str(tmp_path)], timeout=120)
        assert run.returncode == -9
    left = sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp"))
    assert len(left) == 2, left  # the last kill's file (each start removed the one before) and the user's
    Checkpointer(tmp_path, model=nn.Linear(3, 2)).load_latest()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == [
        ".notes.0123456789ab.tmp"
    ]
    (tmp_path / ".step-000000009.pt.fedcba987654.tmp").write_bytes(b"PK")
    assert ck.save(0, 2) is not None
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == [
        ".notes.0123456789ab.tmp"
    ]
    assert dt.load(ck.latest_path())["step"] == 2


def _good_checkpoint(model) -> dict:
    return {
        "epoch": 1,
        "step": 0,
        "global_step": 4,
        "extra": None,
        "model": model.state_dict(),
        "rng": [{"disttorch": dt.get_rng_state(), "numpy": {}, "python": {}}],
        "optimizer": None,
        "scheduler": None,
    }


CRAFTED = {
    "a list": (lambda good: [1, 2], "it holds a list, not a dict"),
    "no model": (lambda good: {k: v for k, v in good.items() if k != "model"}, "it has no 'model'"),
    "no generator states": (lambda good: dict(good, rng=[]), "'rng' is []"),
    "a bad generator state": (lambda good: dict(good, rng=[5]), "an entry of 'rng' is not"),
    "a text epoch": (lambda good: dict(good, epoch="1"), "'epoch' is '1', not a whole number"),
    "a negative step": (lambda good: dict(good, step=-3), "'step' is -3"),
    "a tensor for a model": (
        lambda good: dict(good, model=dt.ones(2)),
        "'model' is a Tensor, not a state dict",
    ),
}


@pytest.mark.parametrize("case", list(CRAFTED))
def test_a_crafted_checkpoint_is_refused_naming_the_file_and_what_is_wrong(tmp_path, case):
    model = nn.Linear(2, 2)
    craft, message = CRAFTED[case]
    dt.save(craft(_good_checkpoint(model)), os.path.join(tmp_path, "step-000000004.pt"))
    with open(os.path.join(tmp_path, "latest"), "w") as f:
        f.write("step-000000004.pt")
    with pytest.raises(
        RuntimeError, match="step-000000004.pt is not a checkpoint written by Checkpointer"
    ) as err:
        Checkpointer(tmp_path, model=model).load_latest()
    assert message in str(err.value)
