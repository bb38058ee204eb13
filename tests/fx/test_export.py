"""``torch.export`` on torch.fx's tracing: the program's graph, signature, module and archive,
against PyTorch 2.13's ``torch.export`` where they answer the same question."""

import io

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn
from disttorch.fx.proxy import TraceError


def _net(L):
    class Net(L.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = L.nn.Linear(4, 3)
            self.norm = L.nn.BatchNorm1d(3)

        def forward(self, x, scale=None):
            h = L.relu(self.norm(self.fc(x)))
            return h.sum(-1) + 1, h * 2

    L.manual_seed(0)
    return Net().eval()


def _facts(L):
    net = _net(L)
    x = L.arange(8.0).reshape(2, 4) / 8
    ep = L.export.export(net, (x,))
    gm = ep.module()
    outs = gm(x)
    return [
        type(ep).__name__,
        type(gm).__name__,
        list(ep.state_dict),
        tuple(ep.graph_signature.user_inputs),
        len(ep.graph_signature.user_outputs),
        [o.detach().numpy().round(5).tolist() for o in outs],
        gm.fc.weight is net.fc.weight,
    ]


def test_an_exported_program_runs_the_module():
    facts = _facts(dt)
    assert facts[:5] == [
        "ExportedProgram",
        "GraphModule",
        [
            "fc.weight",
            "fc.bias",
            "norm.weight",
            "norm.bias",
            "norm.running_mean",
            "norm.running_var",
            "norm.num_batches_tracked",
        ],
        ("x",),  # an argument left out keeps its default: no input of the graph
        2,
    ]
    assert facts[6]  # the module's own parameters
    ep = dt.export.export(
        _net(dt), (dt.ones(2, 4),), dynamic_shapes={"x": {0: dt.export.Dim("batch", min=1)}}
    )
    assert ep.module()(dt.ones(5, 4))[1].shape == (5, 3) and ep.run_decompositions() is ep
    assert "def forward(self, x):" in str(ep) and "x: USER_INPUT" in str(ep)
    with pytest.raises(RuntimeError, match="Unable to call ExportedProgram directly"):
        ep(dt.ones(2, 4))


@pytest.mark.parity
def test_an_exported_program_as_pytorch(torch):
    assert _facts(dt) == _facts(torch)


def test_what_cannot_be_exported_is_named():
    class Branchy(nn.Module):
        def forward(self, x):
            return x if x.sum() > 0 else -x

    with pytest.raises(TraceError):
        dt.export.export(Branchy(), (dt.ones(2),))
    with pytest.raises(ValueError, match=r"top-level keys must be the arg names \['x'\]"):
        dt.export.export(_net(dt), (dt.ones(2, 4),), dynamic_shapes={"x": None, "scale": None})
    with pytest.raises(ValueError, match="Expecting `args` to be a tuple"):
        dt.export.export(_net(dt), dt.ones(2, 4))


def test_save_and_load_keep_the_program(tmp_path):
    net = _net(dt)
    x = dt.ones(3, 4)
    ep = dt.export.export(net, (x,))
    dt.export.save(ep, tmp_path / "net.pt2", extra_files={"note": "v1"})
    extra = {"note": ""}
    loaded = dt.export.load(tmp_path / "net.pt2", extra_files=extra)
    assert extra == {"note": b"v1"}
    np.testing.assert_array_equal(loaded.module()(x)[1].detach().numpy(), net(x)[1].detach().numpy())
    with pytest.raises(RuntimeError, match="written by torch.export.save: read it with torch.export.load"):
        dt.jit.load(tmp_path / "net.pt2")
    with pytest.raises(TypeError, match="must be an instance of 'ExportedProgram'"):
        dt.export.save(net, io.BytesIO())


@pytest.mark.parity
def test_a_pytorch_pt2_file_is_refused_by_name(torch, tmp_path):
    torch.export.save(torch.export.export(torch.nn.Linear(2, 2), (torch.ones(1, 2),)), tmp_path / "l.pt2")
    with pytest.raises(RuntimeError, match="PyTorch exported program"):
        dt.export.load(tmp_path / "l.pt2")
