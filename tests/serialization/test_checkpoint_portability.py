"""A model trained 5 steps in one library continues identically in the other: the state
dict and the optimiser state go through a file (SGD with momentum and Adam, as their state
dicts are in this tree: disttorch's Adam step is a float where PyTorch's is a 0-d tensor;
both load either). A whole model pickled by PyTorch loads as disttorch modules through
safe_globals."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import disttorch as dt

pytestmark = pytest.mark.parity

STEPS = 5


def _data():
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal((16, 4)).astype(np.float32),
        rng.standard_normal((16, 2)).astype(np.float32),
        [rng.standard_normal(s).astype(np.float32) * 0.5 for s in [(8, 4), (8,), (2, 8), (2,)]],
    )


def _models(lib, init):
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 2))
    with lib.no_grad():
        for p, v in zip(model.parameters(), init, strict=True):
            p.copy_(lib.tensor(v)) if hasattr(p, "copy_") else None
    return model


def _opt(lib, name, params):
    if name == "sgd":
        return lib.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=0.01)
    return lib.optim.Adam(params, lr=0.01, betas=(0.8, 0.99), weight_decay=0.01)


def _train(lib, model, opt, x, y, steps):
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(lib.tensor(x)) - lib.tensor(y)) ** 2).mean()
        loss.backward()
        opt.step()


def _params(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("optim", ["sgd", "adam"])
def test_torch_to_disttorch_and_back(optim, tmp_path):
    torch = pytest.importorskip("torch")
    x, y, init = _data()
    # both libraries start equal
    tm, dm = _models(torch, init), _models(dt, init)
    for a, b in zip(_params(tm), _params(dm), strict=True):
        np.testing.assert_array_equal(a, b)
    to, do = _opt(torch, optim, tm.parameters()), _opt(dt, optim, dm.parameters())

    # torch trains 5 steps, saves; disttorch loads and continues; torch continues too
    _train(torch, tm, to, x, y, STEPS)
    torch.save({"model": tm.state_dict(), "optimizer": to.state_dict()}, tmp_path / "t.pt")
    ck = dt.load(tmp_path / "t.pt")
    dm.load_state_dict(ck["model"])
    do.load_state_dict(ck["optimizer"])
    _train(torch, tm, to, x, y, STEPS)
    _train(dt, dm, do, x, y, STEPS)
    for a, b in zip(_params(tm), _params(dm), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)

    # disttorch trains on, saves; torch loads (weights_only) and continues; both agree
    _train(dt, dm, do, x, y, STEPS)
    dt.save({"model": dm.state_dict(), "optimizer": do.state_dict()}, tmp_path / "d.pt")
    ck = torch.load(tmp_path / "d.pt", weights_only=True)
    tm2 = _models(torch, init)
    to2 = _opt(torch, optim, tm2.parameters())
    tm2.load_state_dict(ck["model"])
    to2.load_state_dict(ck["optimizer"])
    _train(torch, tm2, to2, x, y, STEPS)
    _train(dt, dm, do, x, y, STEPS)
    for a, b in zip(_params(tm2), _params(dm), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


_TORCH_SIDE = """
import sys, torch
sys.path.insert(0, sys.argv[1])
from tinynet_def import TinyNet
torch.manual_seed(0)
model = TinyNet()
torch.save(model, sys.argv[2])
torch.save(model(torch.ones(2, 4)).detach(), sys.argv[3])
"""

_NET = """
import {lib} as torch

class TinyNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 5)
        self.act = torch.nn.ReLU()
        self.fc2 = torch.nn.Linear(5, 2)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))
"""


@pytest.mark.timeout(120)
def test_whole_model_pickled_by_torch_loads_through_safe_globals(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    for side, lib in (("t", "torch"), ("d", "disttorch")):
        (tmp_path / side).mkdir()
        (tmp_path / side / "tinynet_def.py").write_text(textwrap.dedent(_NET.format(lib=lib)))
    model_path, out_path = tmp_path / "model.pt", tmp_path / "out.pt"
    subprocess.run(
        [sys.executable, "-c", _TORCH_SIDE, str(tmp_path / "t"), str(model_path), str(out_path)],
        check=True,
        timeout=100,
    )
    monkeypatch.syspath_prepend(str(tmp_path / "d"))
    monkeypatch.delitem(sys.modules, "tinynet_def", raising=False)
    from tinynet_def import TinyNet

    with pytest.raises(Exception, match="TinyNet"):
        dt.load(model_path)
    with dt.serialization.safe_globals([TinyNet, dt.nn.Linear, dt.nn.ReLU]):
        model = dt.load(model_path)
    assert isinstance(model, TinyNet) and isinstance(model.fc1, dt.nn.Linear)
    assert isinstance(model.fc1.weight, dt.nn.Parameter)
    np.testing.assert_allclose(model(dt.ones(2, 4)).detach().numpy(), dt.load(out_path).numpy(), rtol=1e-6)
    assert len(list(model.parameters())) == 4
    model.register_forward_hook(lambda m, i, o: None)  # the hook dicts work after loading


def test_whole_model_pickled_by_disttorch_loads_in_torch(tmp_path):
    torch = pytest.importorskip("torch")
    model = dt.nn.Sequential(dt.nn.Linear(3, 4), dt.nn.ReLU(), dt.nn.Linear(4, 1))
    dt.save(model, tmp_path / "m.pt")
    with torch.serialization.safe_globals([torch.nn.Sequential, torch.nn.Linear, torch.nn.ReLU]):
        loaded = torch.load(tmp_path / "m.pt")
    assert isinstance(loaded[0], torch.nn.Linear) and isinstance(loaded[0].weight, torch.nn.Parameter)
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(
        loaded(torch.tensor(x)).detach().numpy(), model(dt.tensor(x)).detach().numpy(), rtol=1e-6
    )


def _pickled_modules(lib):
    """Modules whose pickled state PyTorch's classes read back specially (recurrent layers'
    weight lists) or that hold functions (a transformer layer's activation)."""
    lib.manual_seed(0)
    return [
        lib.nn.LSTM(3, 4, num_layers=2),
        lib.nn.GRU(3, 4, bidirectional=True, batch_first=True),
        lib.nn.RNN(3, 4, bias=False),
        lib.nn.TransformerDecoderLayer(8, 2, 16, activation="gelu", batch_first=True),
        lib.nn.TransformerEncoderLayer(8, 2, 16),
    ]


@pytest.mark.parametrize("direction", ["torch->disttorch", "disttorch->torch"])
def test_whole_recurrent_and_transformer_modules_load_in_the_other_library(direction, tmp_path):
    torch = pytest.importorskip("torch")
    src, dst = (torch, dt) if direction == "torch->disttorch" else (dt, torch)
    for i, module in enumerate(_pickled_modules(src)):
        src.save(module, tmp_path / f"{i}.pt")
        loaded = dst.load(tmp_path / f"{i}.pt", weights_only=False)
        assert type(loaded).__name__ == type(module).__name__ and repr(loaded) == repr(module)
        for (name, p), (name2, q) in zip(module.named_parameters(), loaded.named_parameters(), strict=True):
            assert name == name2
            np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        if hasattr(module, "all_weights"):  # the recurrent layer runs: its weight list is whole
            x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 4, 3)
            np.testing.assert_allclose(
                loaded(dst.tensor(x))[0].detach().numpy(),
                module(src.tensor(x))[0].detach().numpy(),
                rtol=1e-5,
            )
        else:
            assert loaded.activation is dst.nn.functional.gelu or isinstance(
                loaded.activation_relu_or_gelu, int
            )


@pytest.mark.parametrize("direction", ["torch->disttorch", "disttorch->torch"])
def test_lr_schedule_continues_across_libraries(direction, tmp_path):
    torch = pytest.importorskip("torch")
    src, dst = (torch, dt) if direction == "torch->disttorch" else (dt, torch)

    def schedule(lib):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=0.1, momentum=0.9)
        return opt, lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

    opt, sched = schedule(src)
    for _ in range(3):
        opt.step()
        sched.step()
    src.save({"optimizer": opt.state_dict(), "scheduler": sched.state_dict()}, tmp_path / "s.pt")
    ck = dst.load(tmp_path / "s.pt", weights_only=True)
    opt2, sched2 = schedule(dst)
    opt2.load_state_dict(ck["optimizer"])
    sched2.load_state_dict(ck["scheduler"])
    seen = []
    for o, s, out in ((opt, sched, []), (opt2, sched2, [])):
        for _ in range(4):
            o.step()
            s.step()
            out.append(s.get_last_lr()[0])
        seen.append(out)
    np.testing.assert_allclose(seen[1], seen[0])
