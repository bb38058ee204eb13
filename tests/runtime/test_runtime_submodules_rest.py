"""The remaining torch submodules: func (vmap, grad), random, signal.windows, masked, hub,
futures, compiler/export/fx, library, overrides, return_types and torch_version."""

import threading

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _close(a, b, atol=1e-6):
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    np.testing.assert_allclose(a.detach().numpy(), b, atol=atol, rtol=1e-5)


@pytest.mark.parity
def test_vmap_matches_torch_func(torch):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((5, 3)), rng.standard_normal((3, 2))
    ours = dt.vmap(lambda r, m: r @ m, in_dims=(0, None))(dt.tensor(x), dt.tensor(w))
    theirs = torch.vmap(lambda r, m: r @ m, in_dims=(0, None))(torch.tensor(x), torch.tensor(w))
    _close(ours, theirs)
    ours = dt.func.vmap(lambda c: (c.sum(), c * 2), in_dims=1, out_dims=(0, 1))(dt.tensor(x))
    theirs = torch.func.vmap(lambda c: (c.sum(), c * 2), in_dims=1, out_dims=(0, 1))(torch.tensor(x))
    for a, b in zip(ours, theirs):
        _close(a, b)
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        dt.vmap(lambda a, b: a + b)(dt.zeros(2), dt.zeros(3))
    xs = dt.tensor(x, requires_grad=True)
    assert gradcheck(lambda a: dt.vmap(lambda r: (r * r).sum())(a), (xs,))


@pytest.mark.parity
def test_grad_and_grad_and_value_match_torch_func(torch):
    x = np.array([0.5, -1.0, 2.0])
    f_ours = lambda a, b: (a.sin() * b).sum()  # noqa: E731
    f_theirs = lambda a, b: (a.sin() * b).sum()  # noqa: E731
    _close(
        dt.func.grad(f_ours)(dt.tensor(x), dt.tensor(2.0)),
        torch.func.grad(f_theirs)(torch.tensor(x), torch.tensor(2.0)),
    )
    (ga, gb), value = dt.func.grad_and_value(f_ours, argnums=(0, 1))(dt.tensor(x), dt.tensor(2.0))
    (ta, tb), tvalue = torch.func.grad_and_value(f_theirs, argnums=(0, 1))(torch.tensor(x), torch.tensor(2.0))
    _close(ga, ta)
    _close(gb, tb)
    _close(value, tvalue)
    g, aux = dt.func.grad(lambda a: ((a * a).sum(), "aux"), has_aux=True)(dt.tensor(x))
    assert aux == "aux"
    _close(g, 2 * x)
    with pytest.raises(RuntimeError, match="scalar Tensor"):
        dt.func.grad(lambda a: a * 2)(dt.tensor(x))


def test_random_fork_rng_restores_the_state():
    dt.manual_seed(3)
    with dt.random.fork_rng():
        dt.rand(5)
    after = dt.rand(2).tolist()
    dt.manual_seed(3)
    assert dt.rand(2).tolist() == after
    assert dt.random.initial_seed() == 3


@pytest.mark.parity
@pytest.mark.parametrize(
    "name",
    ["bartlett", "blackman", "cosine", "exponential", "gaussian", "hamming", "hann", "kaiser", "nuttall"],
)
def test_signal_windows_match_torch(torch, name):
    for m in (0, 1, 2, 7, 8):
        for sym in (True, False):
            _close(
                getattr(dt.signal.windows, name)(m, sym=sym, dtype=dt.float64),
                getattr(torch.signal.windows, name)(m, sym=sym, dtype=torch.float64),
            )
    assert getattr(dt.signal.windows, name)(4).dtype == dt.float32
    with pytest.raises(ValueError, match="non-negative"):
        getattr(dt.signal.windows, name)(-1)


@pytest.mark.parity
def test_general_windows_and_parameters(torch):
    _close(
        dt.signal.windows.general_cosine(9, a=[0.4, 0.3, 0.3], sym=False),
        torch.signal.windows.general_cosine(9, a=[0.4, 0.3, 0.3], sym=False),
    )
    _close(
        dt.signal.windows.general_hamming(6, alpha=0.6), torch.signal.windows.general_hamming(6, alpha=0.6)
    )
    _close(
        dt.signal.windows.exponential(9, center=2.0, tau=2.0, sym=False),
        torch.signal.windows.exponential(9, center=2.0, tau=2.0, sym=False),
    )
    _close(dt.signal.windows.kaiser(7, beta=4.0), torch.signal.windows.kaiser(7, beta=4.0))
    assert dt.windows is dt.signal.windows
    with pytest.raises(ValueError, match="Center must be None"):
        dt.signal.windows.exponential(5, center=1.0)


@pytest.mark.parity
@pytest.mark.parametrize(
    "name",
    [
        "sum",
        "prod",
        "amax",
        "amin",
        "argmax",
        "argmin",
        "mean",
        "var",
        "std",
        "norm",
        "logsumexp",
        "softmax",
        "log_softmax",
        "softmin",
        "cumsum",
        "cumprod",
    ],
)
def test_masked_ops_match_torch(torch, name):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5))
    m = rng.random((3, 5)) > 0.3
    m[:, 0] = True
    ours = getattr(dt.masked, name)(dt.tensor(x), 1, mask=dt.tensor(m))
    theirs = getattr(torch.masked, name)(torch.tensor(x), 1, mask=torch.tensor(m))
    a, b = ours.numpy(), theirs.numpy()
    keep = np.isfinite(b)
    assert a.shape == b.shape
    np.testing.assert_allclose(a[keep], b[keep], atol=1e-6)
    if name in ("sum", "mean", "var", "softmax", "prod"):
        xs = dt.tensor(x, requires_grad=True)
        assert gradcheck(lambda t: getattr(dt.masked, name)(t, 1, mask=dt.tensor(m)), (xs,))


def test_masked_rejects_bad_masks():
    with pytest.raises(ValueError, match="bool Tensor"):
        dt.masked.sum(dt.zeros(2), mask=dt.ones(2))
    with pytest.raises(ValueError, match="does not broadcast"):
        dt.masked.sum(dt.zeros(2, 3), mask=dt.ones(4, dtype=dt.bool))
    assert float(dt.masked.sum(dt.ones(2, 3))) == 6.0


def test_hub_loads_local_repositories_and_cached_checkpoints(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "hubconf.py").write_text(
        "import disttorch as torch\n"
        "def tiny(n=3):\n    '''A linear layer.'''\n    return torch.nn.Linear(n, 1)\n"
    )
    model = dt.hub.load(str(repo), "tiny", 4, source="local")
    assert model.in_features == 4
    assert "tiny" in dt.hub.list(str(repo), source="local")
    assert dt.hub.help(str(repo), "tiny", source="local") == "A linear layer."
    with pytest.raises(RuntimeError, match="needs the network"):
        dt.hub.load("pytorch/vision", "resnet18")
    with pytest.raises(RuntimeError, match="Cannot find callable"):
        dt.hub.load(str(repo), "nope", source="local")
    monkeypatch.setattr(dt.hub, "_hub_dir", [None])  # set_dir's choice ends with the test
    dt.hub.set_dir(str(tmp_path / "hub"))
    assert dt.hub.get_dir() == str(tmp_path / "hub")
    with pytest.raises(RuntimeError, match="not cached"):
        dt.hub.load_state_dict_from_url("https://example.com/w/tiny.pt")
    (tmp_path / "hub" / "checkpoints").mkdir(parents=True)
    dt.save(model.state_dict(), str(tmp_path / "hub" / "checkpoints" / "tiny.pt"))
    state = dt.hub.load_state_dict_from_url("https://example.com/w/tiny.pt")
    assert state["weight"].tolist() == model.weight.tolist()


def test_futures_then_collect_and_errors():
    f = dt.futures.Future()
    g = f.then(lambda fut: fut.value() * 2)
    threading.Timer(0.01, f.set_result, (21,)).start()
    assert g.wait() == 42 and f.done()
    with pytest.raises(RuntimeError, match="only be marked completed once"):
        f.set_result(1)
    bad = dt.futures.Future()
    bad.set_exception(ValueError("boom"))
    with pytest.raises(ValueError, match="boom"):
        bad.wait()
    both = dt.futures.collect_all([f, g])
    assert [x.value() for x in both.wait()] == [21, 42]
    assert dt.futures.wait_all([f, g]) == [21, 42]


def test_compiler_export_and_fx():
    def fn(x):
        return x + 1

    assert dt.compiler.disable(fn)(dt.ones(1)).item() == 2 and dt.compiler.disable()(fn).__name__ == "fn"
    assert dt.compiler.is_compiling() is False and "inductor" in dt.compiler.list_backends()
    dt.compiler.reset()
    assert dt.compiler.compile is dt.compile
    assert dt.export.export(dt.nn.Linear(2, 2), (dt.zeros(1, 2),)).module()(dt.zeros(1, 2)).shape == (1, 2)
    assert dt.fx.symbolic_trace(fn)(dt.ones(2)).tolist() == [2.0, 2.0]  # fx traces (tests/fx)
    assert repr(dt.export.Dim("batch", min=1)) == "Dim('batch', min=1, max=None)"


def test_library_custom_op_with_autograd():
    @dt.library.custom_op("tail_test::cube", mutates_args=())
    def cube(x: dt.Tensor) -> dt.Tensor:
        return x * x * x

    def setup(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x * x * grad

    assert cube(dt.tensor([2.0])).tolist() == [8.0]
    dt.library.register_autograd(cube, backward, setup_context=setup)
    x = dt.tensor([1.0, 2.0], dtype=dt.float64, requires_grad=True)
    assert gradcheck(cube, (x,))
    cube.register_kernel("cpu", lambda x: x * 0)
    assert cube(dt.tensor([2.0])).tolist() == [0.0]
    with pytest.raises(ValueError, match="namespace::op_name"):
        dt.library.custom_op("nonamespace", lambda x: x, mutates_args=())


def test_overrides_dispatches_to_torch_function():
    class Wrapped:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return ("wrapped", func.__name__, types)

    class NotMine:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    assert dt.overrides.has_torch_function([Wrapped(), 1]) and not dt.overrides.has_torch_function(
        [dt.zeros(1)]
    )
    assert dt.overrides.is_tensor_like(dt.zeros(1)) and dt.overrides.is_tensor_like(Wrapped())
    out = dt.overrides.handle_torch_function(dt.add, [NotMine(), Wrapped()], 1, 2)
    assert out[:2] == ("wrapped", "add")
    with pytest.raises(TypeError, match="no implementation found for 'add'"):
        dt.overrides.handle_torch_function(dt.add, [NotMine()])


@pytest.mark.parity
def test_return_types_and_torch_version(torch):
    values = dt.max(dt.tensor([[1.0, 3.0]]), 1)
    assert type(values) is dt.return_types.max and "sort" in dir(dt.return_types)
    assert type(torch.max(torch.tensor([[1.0, 3.0]]), 1)) is torch.return_types.max
    with pytest.raises(AttributeError):
        dt.return_types.nope  # noqa: B018
    v = dt.torch_version.TorchVersion("2.10.1+cpu")
    assert v > "2.9" and v >= (2, 10) and v < "2.11" and v == "2.10.1+cpu" and v == (2, 10, 1)
    assert isinstance(v, str)
    tv = torch.torch_version.TorchVersion("2.10.1")
    assert (tv > "2.9") == (v > "2.9")


def test_torch_functional_is_the_top_level_functions():
    """``import torch.functional as F`` (as tutorials do): PyTorch's module of Python-written
    tensor functions, each the same object as ``torch.<name>``."""
    import disttorch.functional as F

    for name in F.__all__:
        assert getattr(F, name) is getattr(dt, name), name
    assert F.einsum("ij->ji", dt.ones(2, 3)).shape == (3, 2)


@pytest.mark.parity
def test_torch_functional_names_as_pytorch(torch):
    import torch.functional as theirs

    import disttorch.functional as ours

    assert sorted(ours.__all__) == sorted(theirs.__all__)


def test_torch_types_aliases_annotate():
    """``from torch.types import Number, Device, _size`` (annotations in programs) imports."""
    from disttorch.types import Device, Number, Storage, _size

    def pad(size: _size, fill: Number = 0, device: Device = None) -> dt.Tensor:
        return dt.full(size, fill, device=device)

    assert pad((2,), 1).tolist() == [1, 1] and Storage is dt.UntypedStorage


@pytest.mark.parity
def test_torch_types_names_as_pytorch(torch):
    import torch.types as theirs

    import disttorch.types as ours

    assert ours.__all__ == theirs.__all__
