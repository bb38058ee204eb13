"""The ``meta`` device: tensors with a shape and dtype and no data, created by factory
functions (``device="meta"``, ``with torch.device("meta")``, ``set_default_device``), kept
meta by every op, and refusing to be read, as PyTorch's meta tensors."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt


def _build(lib):
    with lib.device("meta"):
        net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.LayerNorm(4), lib.nn.Embedding(5, 4))
        made = [lib.zeros(2), lib.arange(4).expand(2, -1), lib.randn(2, 3), lib.tensor([1.0]), lib.eye(2)]
        inside = lib.get_default_device()
    return net, made, inside


@pytest.mark.parity
def test_factories_and_modules_under_the_meta_device_as_pytorch(torch):
    seen = []
    for lib in (dt, torch):
        net, made, inside = _build(lib)
        params = [(n, tuple(p.shape), str(p.device), p.is_meta) for n, p in net.named_parameters()]
        x = lib.empty(7, 3, device="meta")
        y = net[1](net[0](x)).relu().sum(-1, keepdim=True).expand(7, 4)
        views = [y.t(), y[2:], y.reshape(-1), lib.cat([y, y]), y.to(lib.float64), y.mean(0)]
        seen.append(
            (
                params,
                [
                    (
                        str(t.device),
                        tuple(t.shape),
                        t.stride(),
                        repr(t).replace("dist", "").replace("torch.", ""),
                    )
                    for t in made
                ],
                str(inside),
                str(lib.get_default_device()),
                [(str(v.device), tuple(v.shape), str(v.dtype).split(".")[1]) for v in views],
                repr(net[0].weight).replace("dist", "").replace("torch.", ""),
            )
        )
    assert seen[0] == seen[1]


@pytest.mark.parity
def test_meta_tensors_refuse_to_be_read_as_pytorch(torch):
    for lib in (dt, torch):
        z = lib.zeros(2, device="meta")
        with pytest.raises(RuntimeError, match="Tensor.item\\(\\) cannot be called on meta tensors"):
            z[0].item()
        with pytest.raises(RuntimeError, match="Tensor.item\\(\\) cannot be called on meta tensors"):
            bool(z[0])
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
            z.tolist()
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
            z.to("cpu")
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
            lib.zeros(2).copy_(z)
        with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
            z.numpy()
        assert z.copy_(lib.ones(2)).is_meta  # writing into a meta tensor is allowed (and keeps no data)


@pytest.mark.parity
def test_to_empty_and_like_functions_move_off_the_meta_device(torch):
    for lib in (dt, torch):
        with lib.device("meta"):
            lin = lib.nn.Linear(3, 2)
        w = lin.weight
        assert (
            str(lib.empty_like(w).device) == "meta" and str(lib.empty_like(w, device="cpu").device) == "cpu"
        )
        assert str(w.new_zeros(3).device) == "meta"
        lin.to_empty(device="cpu")
        assert str(lin.weight.device) == "cpu" and isinstance(lin.weight, lib.nn.Parameter)
        lin.weight.data.fill_(1.0)
        lin.bias.data.zero_()
        assert lin(lib.ones(1, 3)).tolist() == [[3.0, 3.0]]
        assert str(lib.nn.Linear(2, 2).to("meta").weight.device) == "meta"
        with lib.device("meta"):
            seq = lib.nn.Sequential(lib.nn.Linear(2, 2))
        seq.to_empty(device="cpu", recurse=False)  # only the Sequential's own (none)
        assert str(seq[0].weight.device) == "meta"
        assert str(lib.ones(2).to("meta").device) == "meta"


def test_sampling_on_the_meta_device_leaves_the_generator_alone():
    dt.manual_seed(0)
    expected = dt.rand(3).tolist()
    dt.manual_seed(0)
    meta = dt.empty(4, 4, device="meta")
    dt.randn(5, device="meta"), dt.randint(0, 3, (2,), device="meta"), meta.uniform_(), meta.normal_()
    dt.nn.init.kaiming_uniform_(meta)
    assert dt.rand(3).tolist() == expected


@pytest.mark.parity
def test_set_default_device_meta(torch):
    for lib in (dt, torch):
        lib.set_default_device("meta")
        try:
            assert lib.ones(2).is_meta and str(lib.get_default_device()) == "meta"
        finally:
            lib.set_default_device(None)  # "cpu" would leave PyTorch a device mode (no fast paths)
        assert not lib.ones(2).is_meta


def test_gradients_flow_through_meta_graphs_as_meta_tensors():
    w = dt.empty(3, 2, device="meta", requires_grad=True)
    loss = (dt.ones(4, 3, device="meta") @ w).tanh().sum()
    loss.backward()
    assert w.grad.is_meta and tuple(w.grad.shape) == (3, 2)


#: layers whose constructors take ``device=``: their parameters and buffers are made there
DEVICE_LAYERS = {
    "Conv2d": lambda L, **k: L.nn.Conv2d(3, 4, 3, **k),
    "ConvTranspose1d": lambda L, **k: L.nn.ConvTranspose1d(3, 4, 3, **k),
    "BatchNorm2d": lambda L, **k: L.nn.BatchNorm2d(4, **k),
    "LayerNorm": lambda L, **k: L.nn.LayerNorm(4, **k),
    "GroupNorm": lambda L, **k: L.nn.GroupNorm(2, 4, **k),
    "RMSNorm": lambda L, **k: L.nn.RMSNorm(4, **k),
    "LSTM": lambda L, **k: L.nn.LSTM(3, 4, **k),
    "GRUCell": lambda L, **k: L.nn.GRUCell(3, 4, **k),
    "MultiheadAttention": lambda L, **k: L.nn.MultiheadAttention(4, 2, **k),
    "TransformerEncoderLayer": lambda L, **k: L.nn.TransformerEncoderLayer(4, 2, 8, **k),
}


@pytest.mark.parametrize("name", sorted(DEVICE_LAYERS))
def test_layers_made_with_device_meta_are_meta_and_draw_nothing(torch, name):
    for lib in (dt, torch):
        lib.manual_seed(0)
        layer = DEVICE_LAYERS[name](lib, device="meta")
        tensors = [*layer.parameters(), *layer.buffers()]
        assert tensors and all(t.device.type == "meta" for t in tensors), (lib.__name__, name)
        assert lib.randn(1).item() == pytest.approx(1.5409960746765137)  # the generator did not move


def test_ops_on_empty_meta_tensors_warn_nothing():
    """``empty`` on the meta device holds zeros, not whatever memory held: a convolution of two
    meta tensors (PyTorch's shape-reasoning recipe) computes on them without NumPy overflow
    warnings."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            w = dt.empty(4, 3, 3, 3, device="meta")
            x = dt.empty_like(dt.empty(2, 3, 10, 10), device="meta")
            assert not w._data.view(np.ndarray).any() and not x._data.view(np.ndarray).any()
            assert dt.nn.functional.conv2d(x, w).shape == (2, 4, 8, 8)
            assert (1 / dt.empty(3, device="meta")).is_meta
