"""channels_last / channels_last_3d: a real NHWC buffer (strides as PyTorch's), the
memory_format arguments of to/contiguous/clone/empty/*_like, and the layers that keep it."""

import numpy as np
import pytest

import disttorch as dt
import disttorch.nn.functional as F


def _x(*shape):
    return dt.tensor(np.random.default_rng(0).standard_normal(shape))


def test_to_channels_last_strides_and_values():
    x = _x(2, 3, 4, 5)
    y = x.to(memory_format=dt.channels_last)
    assert y.stride() == (60, 1, 15, 3)
    assert not y.is_contiguous()
    assert y.is_contiguous(memory_format=dt.channels_last)
    assert x.is_contiguous(memory_format=dt.contiguous_format)
    assert not x.is_contiguous(memory_format=dt.channels_last)
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    # the buffer really is NHWC: its transpose to (N, H, W, C) is C-contiguous
    assert y.numpy().transpose(0, 2, 3, 1).flags.c_contiguous
    assert y.to(memory_format=dt.channels_last) is y
    assert x.to(memory_format=dt.contiguous_format) is x
    assert y.contiguous().stride() == (60, 20, 5, 1)
    assert y.contiguous(memory_format=dt.channels_last) is y


def test_channels_last_3d_and_size_one_dims():
    x = _x(2, 3, 4, 5, 6)
    assert x.to(memory_format=dt.channels_last_3d).stride() == (360, 1, 90, 18, 3)
    assert _x(1, 3, 1, 1).to(memory_format=dt.channels_last).stride() == (3, 1, 3, 3)
    assert not _x(2, 3).is_contiguous(memory_format=dt.channels_last)


def test_wrong_rank_is_an_error():
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        _x(2, 3).to(memory_format=dt.channels_last)
    with pytest.raises(RuntimeError, match="required rank 5 tensor"):
        _x(2, 3, 4, 5).contiguous(memory_format=dt.channels_last_3d)
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):
        _x(2, 3).contiguous(memory_format=dt.preserve_format)


def test_empty_like_and_clone_preserve_layout():
    y = _x(2, 3, 4, 5).to(memory_format=dt.channels_last)
    assert dt.empty(2, 3, 4, 5, memory_format=dt.channels_last).stride() == (60, 1, 15, 3)
    for t in (dt.empty_like(y), dt.zeros_like(y), dt.ones_like(y), dt.full_like(y, 2.0), y.clone()):
        assert t.stride() == (60, 1, 15, 3)
    assert dt.zeros_like(y, memory_format=dt.contiguous_format).stride() == (60, 20, 5, 1)
    assert y.clone(memory_format=dt.contiguous_format).stride() == (60, 20, 5, 1)
    assert dt.zeros_like(_x(2, 3, 4, 5).permute(3, 2, 1, 0)).stride() == (1, 5, 20, 60)
    # not dense: the copy is dense, dims in the order of the source's strides
    assert _x(2, 3, 4, 5)[:, :, ::2].transpose(2, 3).clone().stride() == (30, 10, 1, 5)


def test_elementwise_and_gradients_flow():
    x = _x(2, 3, 4, 5).requires_grad_()
    y = x.to(memory_format=dt.channels_last)
    z = (y.relu() * 2 + 1).exp()
    assert z.stride() == (60, 1, 15, 3)
    z.sum().backward()
    np.testing.assert_allclose(
        x.grad.numpy(), (2 * np.exp(2 * np.maximum(x.detach().numpy(), 0) + 1)) * (x.detach().numpy() > 0)
    )


LAYERS = {
    "conv": lambda nn, f: nn.Conv2d(3, 4, 3),
    "conv_t": lambda nn, f: nn.ConvTranspose2d(3, 2, 2),
    "bn": lambda nn, f: nn.BatchNorm2d(3),
    "gn": lambda nn, f: nn.GroupNorm(1, 3),
    "max_pool": lambda nn, f: lambda t: f.max_pool2d(t, 2),
    "avg_pool": lambda nn, f: lambda t: f.avg_pool2d(t, 2),
    "adaptive": lambda nn, f: lambda t: f.adaptive_avg_pool2d(t, 2),
    "adaptive_to_1": lambda nn, f: lambda t: f.adaptive_avg_pool2d(t, 1),
    "interpolate": lambda nn, f: lambda t: f.interpolate(t, scale_factor=2, mode="bilinear"),
    "pad": lambda nn, f: lambda t: f.pad(t, (1, 1, 1, 1)),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layers_keep_channels_last_as_pytorch(name):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    tl = LAYERS[name](torch.nn, torch.nn.functional)
    ol = LAYERS[name](dt.nn, F)
    if isinstance(tl, torch.nn.Module):
        ol.load_state_dict({k: dt.tensor(v.detach().numpy()) for k, v in tl.state_dict().items()})
    want = tl(torch.tensor(x).to(memory_format=torch.channels_last))
    got = ol(dt.tensor(x).to(memory_format=dt.channels_last))
    assert got.stride() == want.stride()
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-5)
    # a contiguous input keeps giving a contiguous output
    assert ol(dt.tensor(x)).is_contiguous()


@pytest.mark.parity
def test_gradients_of_leaves_keep_their_layout():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).standard_normal((2, 3, 8, 8)).astype(np.float32)
    strides = []
    for lib in (torch, dt):
        conv = lib.nn.Conv2d(3, 4, 3).to(memory_format=lib.channels_last)
        z = lib.tensor(x).to(memory_format=lib.channels_last).requires_grad_()
        conv(z).sum().backward()
        t = lib.tensor(x[0, 0]).t().requires_grad_()
        (t * 2).sum().backward()
        strides.append((z.grad.stride(), conv.weight.grad.stride(), t.grad.stride()))
    assert strides[1] == strides[0]


def test_a_gradient_copied_from_a_view_keeps_the_leafs_layout():
    """A channels-last leaf's gradient that arrives as a view (of its permute's gradient)
    is copied into ``.grad`` with the leaf's strides, as PyTorch's layout contract says;
    a leaf that is not dense gets a contiguous one."""
    z = dt.tensor(_x(2, 3, 4, 5).float()).to(memory_format=dt.channels_last).requires_grad_()
    z.permute(0, 2, 3, 1).sum().backward()
    assert z.grad.stride() == z.stride() == (60, 1, 15, 3)
    w = dt.tensor(_x(4, 6).float())[:, ::2].detach().requires_grad_()
    (w.t() * 1).t().sum().backward()
    assert w.grad.is_contiguous()
    c = dt.tensor(_x(3, 4).float()).requires_grad_()  # a contiguous leaf, its gradient transposed
    (c.t() * dt.ones(4, 3)).sum().backward()
    assert c.grad.stride() == (4, 1)


def test_conv_with_channels_last_weight_and_module_to():
    m = dt.nn.Sequential(dt.nn.Conv2d(3, 4, 3), dt.nn.BatchNorm2d(4), dt.nn.ReLU())
    ref = m(_x(2, 3, 8, 8).float()).detach().numpy()
    m = m.to(memory_format=dt.channels_last)
    assert m[0].weight.is_contiguous(memory_format=dt.channels_last)
    assert m[0].bias.is_contiguous()
    out = m(_x(2, 3, 8, 8).float())
    assert out.is_contiguous(memory_format=dt.channels_last)
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parity
def test_like_functions_keep_only_dense_layouts_as_pytorch(torch):
    """``*_like`` keep the strides of a dense input (permuted or not) and lay out an
    overlapping (expanded) or holed (stepped) input contiguously, as PyTorch does."""

    def strides(lib):
        base = lib.arange(24).reshape(2, 3, 4)
        inputs = [
            lib.arange(5).expand(3, -1),
            base[:, :, ::2],
            base.permute(2, 0, 1),
            base.expand(2, 2, 3, 4).permute(1, 0, 3, 2),
        ]
        return [fn(x).stride() for x in inputs for fn in (lib.empty_like, lib.zeros_like, lib.ones_like)]

    assert strides(dt) == strides(torch)
