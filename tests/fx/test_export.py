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


def _decorated(L):
    """A forward as libraries write them (transformers' models): wrapped by a decorator taking
    ``(*args, **kwargs)``, with ``**kwargs`` of its own, slicing a buffer by the input's length,
    looping over a dimension, asking ``callable``/``isinstance`` of a tensor and returning a
    registered pytree container."""
    import dataclasses
    import functools
    import importlib

    @dataclasses.dataclass
    class Out:
        logits: object
        parts: object

    importlib.import_module(f"{L.__name__}.utils._pytree").register_pytree_node(
        Out, lambda o: ([o.logits, o.parts], None), lambda leaves, _: Out(*leaves)
    )

    def doubled(forward):
        @functools.wraps(forward)
        def wrapper(self, *args, **kwargs):
            return forward(self, *args, **kwargs)

        return wrapper

    class Net(L.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("pos", L.arange(16.0).reshape(1, 16))
            self.fc = L.nn.Linear(4, 4)

        @doubled
        def forward(self, x, mask=None, **kwargs):
            n = x.shape[1]
            h = self.fc(x) + self.pos[:, :n, None] / 16
            rows = [h[:, i].sum(-1) for i in range(x.size(1))]
            h = h() if callable(h) else h  # (x-transformers' default(); a tensor is no callable)
            if isinstance(h, L.Tensor):  # (how einops picks its backend)
                h = h * len(x)
            return Out(h, L.stack(rows, -1))

    L.manual_seed(0)
    net, x = Net(), L.arange(24.0).reshape(2, 3, 4) / 24
    ep = L.export.export(net, (x,))
    out = ep.module()(x)
    want = net(x)
    return [
        type(out).__name__,
        tuple(ep.graph_signature.user_inputs),
        [t.detach().numpy().round(5).tolist() for t in (out.logits, out.parts)],
        all(bool((a == b).all()) for a, b in ((out.logits, want.logits), (out.parts, want.parts))),
    ]


def test_a_decorated_forward_is_exported_with_the_examples_shapes():
    # PyTorch 2.13 answers ["Out", ("x",), ..., True] (its export is too slow to run here)
    facts = _decorated(dt)
    assert facts[:2] == ["Out", ("x",)] and facts[3]


def _forward_calls(L):
    """How often ``export`` runs a module's own forward (a ``print`` in it shows each run),
    the module returning a registered pytree container, made again in the graph."""
    import collections

    Pair = collections.namedtuple("Pair", "a b")
    calls = []

    class Net(L.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = L.nn.Linear(3, 2)

        def forward(self, x):
            calls.append(tuple(x.shape))
            return Pair(self.fc(x).relu(), x.sum())

    L.manual_seed(0)
    ep = L.export.export(Net(), (L.ones(4, 3),))
    out = ep.module()(L.ones(4, 3))
    return calls, type(out).__name__, tuple(out.a.shape)


def test_export_runs_the_forward_once():
    # PyTorch 2.13 answers the same (its forward's one run sees FakeTensors)
    assert _forward_calls(dt) == ([(4, 3)], "Pair", (4, 2))


def test_symbolic_trace_fixes_the_kwargs_of_a_wrapped_forward():
    import functools

    def deco(forward):
        @functools.wraps(forward)
        def wrapper(self, *args, **kwargs):
            return forward(self, *args, **kwargs) * 2

        return wrapper

    class Net(nn.Module):
        @deco
        def forward(self, x, *, k=1, **kwargs):
            return x + k

    gm = dt.fx.symbolic_trace(Net(), concrete_args={"kwargs": {}})
    assert gm(dt.ones(2), 3).tolist() == [8.0, 8.0]
    with pytest.raises(ValueError, match=r"wrapper around a signature with kwargs.*concrete_args"):
        dt.fx.symbolic_trace(Net())  # (PyTorch: ValueError 'code: co_varnames is too small')


def test_a_dynamic_dimension_keeps_the_sizes_read_from_it_in_the_graph():
    class Flat(nn.Module):
        def forward(self, x):
            return x.reshape(x.shape[0], -1).sum(1) + x.size(0)

    ep = dt.export.export(Flat(), (dt.ones(2, 3, 4),), dynamic_shapes={"x": {0: dt.export.Dim("b")}})
    assert ep.module()(dt.ones(5, 3, 4)).tolist() == [17.0] * 5  # PyTorch 2.13's answer
    with pytest.raises(AssertionError, match=r"Guard failed: x\.size\(\)\[2\] == 4"):
        ep.module()(dt.ones(5, 3, 5))  # PyTorch's guard on a static dimension
    fixed = dt.export.export(Flat(), (dt.ones(2, 3, 4),)).module()
    assert fixed(dt.ones(2, 3, 4)).tolist() == [14.0, 14.0]  # specialised to the example's sizes
    with pytest.raises(AssertionError, match=r"Guard failed: x\.size\(\)\[0\] == 2"):
        fixed(dt.ones(5, 3, 4))


def _export_flags(L) -> list:
    """What a forward sees of ``is_exporting``/``is_compiling`` while ``torch.export`` captures
    it, and what is seen after; the exported program's choice of branch."""
    seen = []

    class Branchy(L.nn.Module):
        def forward(self, x):
            if L.compiler.is_exporting():
                seen.append(("export", L.compiler.is_compiling()))
                return x * 2
            return x + 1

    x = L.ones(2)
    ep = L.export.export(Branchy(), (x,))
    return [seen[0], ep.module()(x).tolist(), L.compiler.is_exporting(), L.compiler.is_compiling()]


def test_a_forward_knows_it_is_being_exported():
    assert _export_flags(dt) == [("export", True), [2.0, 2.0], False, False]


def test_export_flags_as_pytorch(torch):
    assert _export_flags(dt) == _export_flags(torch)
