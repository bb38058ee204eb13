"""``torch.jit``'s script modules and archives: what ``script``/``trace`` return for a module,
``save``/``load`` (also across processes, without the model's source), and ``torch.load`` of
an archive, against PyTorch 2.13 where it answers the same question."""

import io
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.seq = nn.Sequential(nn.BatchNorm1d(2), nn.Linear(2, 1))

    def forward(self, x):
        return self.seq(self.fc(x))


def _torch_net(torch):
    class Net(torch.nn.Module):  # the same name: reprs print it
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(3, 2)
            self.seq = torch.nn.Sequential(torch.nn.BatchNorm1d(2), torch.nn.Linear(2, 1))

        def forward(self, x):
            return self.seq(self.fc(x))

    return Net()


def test_a_script_module_shares_the_parameters_and_runs_the_module():
    dt.manual_seed(0)
    net = Net()
    scripted = dt.jit.script(net)
    assert isinstance(scripted, dt.jit.ScriptModule) and isinstance(scripted.fc, dt.jit.ScriptModule)
    assert type(scripted).__name__ == "RecursiveScriptModule" and scripted.original_name == "Net"
    assert scripted.fc.weight is net.fc.weight and list(scripted.state_dict()) == list(net.state_dict())
    assert dt.jit.script(scripted) is scripted
    x = dt.randn(4, 3)
    np.testing.assert_array_equal(scripted.eval()(x).detach().numpy(), net.eval()(x).detach().numpy())
    scripted.train()  # its own mode, and its own children
    assert scripted.training and scripted.seq[0].training and not net.training and not net.seq[0].training
    optimizer = dt.optim.SGD(scripted.parameters(), lr=0.1)
    before = net.fc.weight.detach().clone()
    scripted(x).sum().backward()
    optimizer.step()
    assert not dt.equal(before, net.fc.weight)  # trained through the view
    scripted.extra = nn.Linear(1, 1)  # a child added to one is not added to the other
    assert "extra" not in net._modules
    f = lambda y: y * 2  # noqa: E731
    assert dt.jit.script(f) is f and dt.jit.trace(f, x) is f


@pytest.mark.parity
def test_script_and_trace_print_and_run_as_pytorch(torch):
    dt.manual_seed(0)
    torch.manual_seed(0)
    ours, theirs = Net(), _torch_net(torch)
    theirs.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    assert repr(dt.jit.script(ours)) == repr(torch.jit.script(theirs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's tracer warns about nothing here
        for check in (True, False):
            traced_ours, traced_theirs = (
                dt.jit.trace(ours, dt.tensor(x), check_trace=check),
                torch.jit.trace(theirs, torch.tensor(x), check_trace=check),
            )
            # the class name, and the batch norm's statistics: the module ran as often as in PyTorch
            assert repr(traced_ours) == repr(traced_theirs)
            assert int(ours.seq[0].num_batches_tracked) == int(theirs.seq[0].num_batches_tracked)
            np.testing.assert_allclose(
                ours.seq[0].running_mean.numpy(), theirs.seq[0].running_mean.numpy(), rtol=1e-6
            )
            np.testing.assert_allclose(
                traced_ours(dt.tensor(x)).detach().numpy(),
                traced_theirs(torch.tensor(x)).detach().numpy(),
                rtol=1e-6,
            )


def test_save_and_load_keep_the_module_and_the_extra_files(tmp_path):
    dt.manual_seed(0)
    net = Net().eval()
    x = dt.randn(4, 3)
    path = tmp_path / "net.pt"
    dt.jit.save(dt.jit.trace(net, x), path, _extra_files={"meta.txt": "epoch 3"})
    extra = {"meta.txt": "", "absent": ""}
    loaded = dt.jit.load(path, map_location="cpu", _extra_files=extra)
    assert type(loaded).__name__ == "RecursiveScriptModule" and extra == {
        "meta.txt": b"epoch 3",
        "absent": b"",
    }
    np.testing.assert_array_equal(loaded(x).detach().numpy(), net(x).detach().numpy())
    buffer = io.BytesIO(dt.jit.script(net).save_to_buffer())
    assert dt.equal(dt.jit.load(buffer)(x), net(x))
    assert [p.name for p in tmp_path.iterdir()] == ["net.pt"]  # written in place, no temporary left


def test_an_archive_loads_in_a_process_without_the_models_source(tmp_path):
    """A class defined in the saving program's ``__main__`` travels in the archive."""
    save = textwrap.dedent(
        """
        import sys
        import disttorch as torch
        class Doubler(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = torch.nn.Parameter(torch.tensor([2.0]))
            def forward(self, x):
                return x * self.scale
        torch.jit.script(Doubler()).save(sys.argv[1])
        """
    )
    load = "import sys, disttorch as t; print(t.jit.load(sys.argv[1])(t.tensor([1.5, -1.0])).tolist())"
    path = str(tmp_path / "d.pt")
    subprocess.run([sys.executable, "-c", save, path], check=True, timeout=120)
    out = subprocess.run(
        [sys.executable, "-c", load, path], check=True, timeout=120, capture_output=True, text=True
    )
    assert out.stdout.strip() == "[3.0, -2.0]"


def test_torch_load_of_an_archive_warns_and_needs_weights_only_false():
    buffer = io.BytesIO(dt.jit.script(nn.Linear(2, 2)).save_to_buffer())
    with pytest.warns(UserWarning, match="looks like a TorchScript archive"):
        with pytest.raises(RuntimeError, match="Cannot use ``weights_only=True`` with TorchScript archives"):
            dt.load(buffer)
    buffer.seek(0)
    with pytest.warns(UserWarning, match="dispatching to 'torch.jit.load'"):
        assert isinstance(dt.load(buffer, weights_only=False), dt.jit.RecursiveScriptModule)


def test_what_is_not_an_archive_is_named(tmp_path):
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'save'"):
        dt.jit.save(nn.Linear(2, 2), tmp_path / "x.pt")
    dt.save(nn.Linear(2, 2).state_dict(), tmp_path / "sd.pt")
    with pytest.raises(RuntimeError, match="is a torch.save checkpoint, not a torch.jit.save archive"):
        dt.jit.load(tmp_path / "sd.pt")
    (tmp_path / "t.txt").write_text("hello")
    with pytest.raises(RuntimeError, match="is not a zip archive"):
        dt.jit.load(tmp_path / "t.txt")
    with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule"):
        dt.jit.freeze(nn.Linear(2, 2))
    scripted = dt.jit.script(nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
        dt.jit.freeze(scripted)
    frozen = dt.jit.optimize_for_inference(scripted)
    assert isinstance(frozen, dt.jit.RecursiveScriptModule) and not frozen.training


@pytest.mark.parity
def test_a_pytorch_torchscript_archive_is_refused_by_name(torch, tmp_path):
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), tmp_path / "ts.pt")
    with pytest.raises(RuntimeError, match="PyTorch TorchScript archive, which disttorch cannot run"):
        dt.jit.load(tmp_path / "ts.pt")


class _Out(dict):
    """A dict subclass output, as transformers' ``ModelOutput``."""


def _outputs(T):
    class Outputs(T.nn.Module):
        def __init__(self, make):
            super().__init__()
            self.make = make

        def forward(self, x):
            return self.make(T, x)

    return Outputs


_MAKERS = {
    "namedtuple": lambda T, x: (x + T.zeros(2, 2)).max(0),
    "list": lambda T, x: [x, x * 2],
    "dict": lambda T, x: _Out(a=x, b=x + 1),
    "none": lambda T, x: (x, None),
}


def _described(value):
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, [_described(v) for v in value])
    if isinstance(value, dict):
        return (type(value).__name__, {k: _described(v) for k, v in value.items()})
    return "tensor" if hasattr(value, "shape") else repr(value)


def _traced(T, make, strict, tmp_path=None):
    try:
        traced = T.jit.trace(_outputs(T)(make), T.ones(2), strict=strict)
    except RuntimeError as e:
        return str(e).split(" can be output")[0].split(" might cause")[0]
    outs = [traced(T.ones(2))]
    if tmp_path is not None:  # a saved and loaded trace returns the same containers
        T.jit.save(traced, str(tmp_path / "t.pt"))
        outs.append(T.jit.load(str(tmp_path / "t.pt"))(T.ones(2)))
        outs.append(T.jit.freeze(traced.eval())(T.ones(2)))
    return [_described(o) for o in outs]


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("name", sorted(_MAKERS))
def test_a_traced_module_returns_a_traces_containers(name, strict, tmp_path):
    # the module's own containers came back (transformers' ModelOutput, not a dict), and a
    # dict under strict, or None, was traced without PyTorch's error
    ours = _traced(dt, _MAKERS[name], strict, tmp_path)
    expected = {
        "namedtuple": ("tuple", ["tensor", "tensor"]),
        "list": ("list", ["tensor", "tensor"]),
        "dict": "Encountering a dict at the output of the tracer"
        if strict
        else ("dict", {"a": "tensor", "b": "tensor"}),
        "none": "Only tensors, lists, tuples of tensors, or dictionary of tensors",
    }[name]
    assert ours == (expected if isinstance(expected, str) else [expected] * 3)


@pytest.mark.parity
@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("name", ["namedtuple", "list", "none"])
def test_traced_containers_as_pytorch(torch, name, strict):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _traced(dt, _MAKERS[name], strict) == _traced(torch, _MAKERS[name], strict)
