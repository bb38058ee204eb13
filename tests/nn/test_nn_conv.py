"""Convolution (``nn.functional.conv1d/2d/3d``, ``nn.Conv1d/Conv2d``): values against a
direct loop definition, finite-difference gradients in float64, shapes, error messages.
Every test runs twice, once per algorithm for stride-1 convolutions (im2col, shifted
products), whatever the channel count; the shifted run takes one image per block."""

import importlib

import numpy as np
import pytest
from parity_helpers import copy_weights, randn, run_both

import disttorch as dt
import disttorch.nn.functional as F
from disttorch.autograd import gradcheck

shifted = importlib.import_module("disttorch.kernels.conv_shifted")


@pytest.fixture(autouse=True, params=["im2col", "shifted"])
def stride1_algorithm(request, monkeypatch):
    monkeypatch.setattr(shifted, "MIN_CHANNELS", 1 if request.param == "shifted" else 10**9)
    monkeypatch.setattr(shifted, "BLOCK_BYTES", 1)
    return request.param


def reference_conv2d(x, w, b, stride, padding, dilation, groups):
    """Straightforward definition: a loop over output pixels (test oracle only)."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(oh):
            for j in range(ow):
                patch = xp[
                    :,
                    g * cg : (g + 1) * cg,
                    i * stride[0] : i * stride[0] + dilation[0] * (kh - 1) + 1 : dilation[0],
                    j * stride[1] : j * stride[1] + dilation[1] * (kw - 1) + 1 : dilation[1],
                ]
                out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    return out + (b[None, :, None, None] if b is not None else 0)


@pytest.mark.parametrize(
    "stride,padding,dilation,groups",
    [
        ((1, 1), (0, 0), (1, 1), 1),
        ((2, 1), (1, 2), (1, 1), 1),
        ((1, 2), (2, 1), (2, 1), 1),
        ((2, 2), (1, 1), (1, 1), 2),
    ],
)
def test_conv2d_matches_loop_definition(stride, padding, dilation, groups):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 7, 8))
    w = rng.standard_normal((6, 4 // groups, 3, 2))
    b = rng.standard_normal(6)
    out = F.conv2d(dt.tensor(x), dt.tensor(w), dt.tensor(b), stride, padding, dilation, groups)
    np.testing.assert_allclose(
        out.numpy(), reference_conv2d(x, w, b, stride, padding, dilation, groups), atol=1e-12
    )


def test_blocks_of_several_images_with_a_shorter_last_one_give_the_same_values_and_gradients(monkeypatch):
    """Five images in blocks of two (2, 2, 1): each block is padded, multiplied, cropped and
    given its bias in turn; the values match the loop definition and the gradients those of
    one image per block."""
    rng = np.random.default_rng(1)
    x, w, b = rng.standard_normal((5, 4, 7, 8)), rng.standard_normal((6, 4, 3, 3)), rng.standard_normal(6)
    runs = []
    for image_bytes in (2 * 6 * 7 * 10 * 8, 1):  # two images of the computed grid (6 x 7 x 10 float64)
        monkeypatch.setattr(shifted, "BLOCK_BYTES", image_bytes)
        xt, wt, bt = (dt.tensor(a, requires_grad=True) for a in (x, w, b))
        out = F.conv2d(xt, wt, bt, padding=1)
        out.backward(dt.tensor(np.sin(np.arange(out.numel())).reshape(out.shape)))
        runs.append([out.detach().numpy(), xt.grad.numpy(), wt.grad.numpy(), bt.grad.numpy()])
    np.testing.assert_allclose(runs[0][0], reference_conv2d(x, w, b, (1, 1), (1, 1), (1, 1), 1), atol=1e-12)
    for blocked, single in zip(runs[0], runs[1]):
        np.testing.assert_allclose(blocked, single, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(stride=2, padding=1),
        dict(padding="same", dilation=2),
        dict(groups=2, padding=(1, 0)),
        dict(padding="same"),
        dict(padding=(3, 1)),
        dict(stride=(1, 2), groups=2, dilation=(2, 1)),
    ],
)
def test_conv2d_gradcheck(kw):
    """Covers both input-gradient paths: stride 1 (as a convolution of the gradient) and
    strided or over-padded convolutions (col2im)."""
    x = dt.randn(2, 4, 5, 4, dtype=dt.float64, requires_grad=True)
    w = dt.randn(2, 4 // kw.get("groups", 1), 2, 3, dtype=dt.float64, requires_grad=True)
    b = dt.randn(2, dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda a, c, d: F.conv2d(a, c, d, **kw), (x, w, b))


def test_conv1d_and_conv3d_gradcheck():
    x = dt.randn(2, 3, 7, dtype=dt.float64, requires_grad=True)
    w = dt.randn(4, 3, 3, dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda a, c: F.conv1d(a, c, stride=2, padding=1, dilation=2), (x, w))
    x3 = dt.randn(1, 2, 3, 4, 3, dtype=dt.float64, requires_grad=True)
    w3 = dt.randn(2, 2, 2, 2, 2, dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda a, c: F.conv3d(a, c, padding=1), (x3, w3))


def test_same_padding_keeps_size_and_pads_extra_at_the_end():
    x = dt.randn(1, 1, 6, 6)
    w = dt.ones(1, 1, 4, 4)
    assert F.conv2d(x, w, padding="same").shape == (1, 1, 6, 6)
    # total padding 3 for a 4-wide kernel: 1 before, 2 after
    one = dt.zeros(1, 1, 1, 6)
    one.numpy()[0, 0, 0, 0] = 1.0
    row = F.conv2d(one, dt.ones(1, 1, 1, 4), padding="same").numpy()[0, 0, 0]
    np.testing.assert_allclose(row, [1, 1, 0, 0, 0, 0])
    assert F.conv2d(x, w, padding="valid").shape == (1, 1, 3, 3)


def test_unbatched_input_and_no_bias():
    x = dt.randn(3, 5, 5, requires_grad=True)
    w = dt.randn(2, 3, 3, 3)
    out = F.conv2d(x, w, padding=1)
    assert out.shape == (2, 5, 5)
    out.sum().backward()
    assert x.grad.shape == (3, 5, 5)
    batched = F.conv2d(x.detach().unsqueeze(0), w, padding=1)
    np.testing.assert_allclose(batched.numpy()[0], out.detach().numpy(), rtol=1e-6)
    assert F.conv1d(dt.randn(3, 8), dt.randn(2, 3, 3)).shape == (2, 6)


def test_float32_stays_float32():
    out = F.conv2d(dt.randn(1, 2, 4, 4), dt.randn(3, 2, 3, 3), dt.randn(3))
    assert out.dtype == dt.float32


@pytest.mark.parametrize(
    "call,message",
    [
        (
            lambda: F.conv2d(dt.randn(2, 3), dt.randn(4, 3, 3, 3)),
            "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 3]",
        ),
        (
            lambda: F.conv2d(dt.randn(2, 1, 5, 5), dt.randn(4, 3, 3, 3)),
            "Given groups=1, weight of size [4, 3, 3, 3], expected input[2, 1, 5, 5] to have 3 channels, "
            "but got 1 channels instead",
        ),
        (
            lambda: F.conv1d(dt.randn(2, 3, 5, 5), dt.randn(4, 3, 3)),
            "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: [2, 3, 5, 5]",
        ),
        (
            lambda: F.conv2d(dt.randn(2, 3, 2, 2), dt.randn(4, 3, 3, 3)),
            "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be "
            "greater than actual input size",
        ),
        (
            lambda: F.conv2d(dt.randn(2, 4, 5, 5), dt.randn(4, 2, 3, 3), groups=3),
            "Given groups=3, expected weight to be divisible by 3 at dimension 0",
        ),
        (
            lambda: F.conv2d(dt.randn(2, 3, 5, 5), dt.randn(4, 3, 3, 3), dt.randn(3)),
            "expected bias to be 1-dimensional with 4 elements, but got bias of size [3] instead",
        ),
        (
            lambda: F.conv2d(dt.randn(2, 3, 5, 5), dt.randn(4, 3, 3, 3), stride=2, padding="same"),
            "padding='same' is not supported for strided convolutions",
        ),
        (
            lambda: F.conv2d(dt.randn(2, 3, 5, 5), dt.randn(4, 3, 3, 3), padding="full"),
            "Invalid padding string: 'full'",
        ),
        (
            lambda: F.conv2d(dt.randn(2, 3, 5, 5), dt.randn(4, 3, 3, 3), stride=0),
            "non-positive stride is not supported",
        ),
        (
            lambda: F.conv2d(dt.randn(2, 3, 5, 5), dt.randn(4, 3, 3, 3), padding=-1),
            "negative padding is not supported",
        ),
        (
            lambda: F.conv2d(dt.randn(2, 3, 5, 5), dt.randn(4, 3, 3, 3), stride=(1, 1, 1)),
            "expected stride to be a single integer value or a list of 2 values",
        ),
        (
            lambda: F.conv2d(dt.randn(2, 3, 5, 5, dtype=dt.float64), dt.randn(4, 3, 3, 3)),
            "expected scalar type Double but found Float",
        ),
    ],
)
def test_conv_errors_name_both_sides(call, message):
    with pytest.raises(RuntimeError) as info:
        call()
    assert message in str(info.value)


@pytest.mark.parametrize(
    "conv, w_shape, kw",
    [
        (F.conv2d, (4, 2, 3, 3), dict(stride=2, padding=1)),
        (F.conv2d, (4, 1, 2, 2), dict(dilation=2, groups=2)),
        (F.conv1d, (3, 2, 3), dict(stride=2, padding=2)),
        (F.conv_transpose2d, (2, 1, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    ],
)
def test_second_derivatives_in_every_argument(conv, w_shape, kw):
    # create_graph records the backward as (transposed) convolutions: a gradient penalty
    # (WGAN-GP, R1) differentiates the input gradient again, in the input and the weight
    rng = np.random.default_rng(0)
    x = dt.tensor(rng.normal(size=(1, 2) + (4,) * (len(w_shape) - 2)), requires_grad=True)
    w = dt.tensor(rng.normal(size=w_shape), requires_grad=True)
    transposed = conv.__name__.startswith("conv_transpose")  # (by name: F's functions may be rewrapped)
    b = dt.tensor(rng.normal(size=w_shape[1] if transposed else w_shape[0]), requires_grad=True)
    assert dt.autograd.gradgradcheck(lambda a, c, d: conv(a, c, d, **kw), (x, w, b))


@pytest.mark.parity
def test_gradient_penalty_through_convolutions_matches_pytorch(torch, stride1_algorithm):
    rng = np.random.default_rng(1)
    arrays = [rng.normal(size=s) for s in ((2, 3, 6, 6), (4, 3, 3, 3), (4,), (4, 2, 4, 4), (2,))]

    def penalty(lib):
        x, w, b, wt, bt = (lib.tensor(a, requires_grad=True) for a in arrays)
        y = lib.nn.functional.conv2d(x, w, b, stride=2, padding=1).tanh()
        y = lib.nn.functional.conv_transpose2d(y, wt, bt, stride=2, padding=1)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        ((g.flatten(1).norm(dim=1) - 1) ** 2).mean().backward()
        assert bt.grad is None  # the input gradient does not depend on the last bias
        return [t.grad.numpy() for t in (x, w, b, wt)]

    for ours, theirs in zip(penalty(dt), penalty(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_conv_modules_shapes_parameters_and_repr():
    conv = dt.nn.Conv2d(3, 8, 3, stride=2, padding=1)
    assert conv.weight.shape == (8, 3, 3, 3) and conv.bias.shape == (8,)
    assert conv(dt.randn(2, 3, 9, 9)).shape == (2, 8, 5, 5)
    assert conv(dt.randn(3, 9, 9)).shape == (8, 5, 5)
    assert repr(conv) == "Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))"
    assert (
        repr(dt.nn.Conv1d(2, 4, 3, groups=2, bias=False, padding="same"))
        == "Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=same, groups=2, bias=False)"
    )
    assert dt.nn.Conv1d(2, 4, 3, bias=False).bias is None
    assert dt.nn.Conv1d(2, 4, 5, padding="same")(dt.randn(1, 2, 7)).shape == (1, 4, 7)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (
            dict(in_channels=3, out_channels=4, kernel_size=3, groups=2),
            "in_channels must be divisible by groups",
        ),
        (
            dict(in_channels=4, out_channels=3, kernel_size=3, groups=2),
            "out_channels must be divisible by groups",
        ),
        (dict(in_channels=4, out_channels=4, kernel_size=3, padding="full"), "Invalid padding string 'full'"),
        (
            dict(in_channels=4, out_channels=4, kernel_size=3, stride=2, padding="same"),
            "padding='same' is not supported for strided convolutions",
        ),
        (
            dict(in_channels=4, out_channels=4, kernel_size=3, padding_mode="mirror"),
            "padding_mode must be one of",
        ),
    ],
)
def test_conv_module_argument_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        dt.nn.Conv2d(**kwargs)


def test_small_cnn_learns_bar_orientation():
    """End to end: Conv2d, ReLU, MaxPool2d, BatchNorm2d, Linear and SGD learn to tell
    horizontal from vertical bars (8x8 images with noise) within a few dozen steps."""
    rng = np.random.default_rng(0)
    n = 64
    images = rng.normal(0, 0.3, (n, 1, 8, 8)).astype(np.float32)
    labels = rng.integers(0, 2, n)
    where = rng.integers(1, 7, n)
    for i in range(n):
        if labels[i]:
            images[i, 0, :, where[i]] += 1.0
        else:
            images[i, 0, where[i], :] += 1.0
    dt.manual_seed(0)
    nn = dt.nn
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(4 * 16, 2),
    )
    opt = dt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = dt.tensor(images), dt.tensor(labels)
    losses = []
    for _ in range(40):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with dt.no_grad():
        accuracy = (model(x).numpy().argmax(1) == labels).mean()
    assert losses[-1] < 0.5 * losses[0]
    assert accuracy > 0.95


@pytest.mark.parametrize(
    "kw",
    [dict(), dict(stride=2, padding=1, output_padding=1), dict(stride=(2, 1), dilation=(1, 2), groups=2)],
)
def test_conv_transpose2d_gradcheck(kw):
    x = dt.randn(2, 4, 3, 3, dtype=dt.float64, requires_grad=True)
    w = dt.randn(4, 2, 2, 3, dtype=dt.float64, requires_grad=True)
    b = dt.randn(2 * kw.get("groups", 1), dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda a, c, d: F.conv_transpose2d(a, c, d, **kw), (x, w, b))


def test_conv_transpose_is_the_adjoint_of_conv():
    """<conv(x), y> == <x, conv_transpose(y)> for the same weight and arguments."""
    x = dt.randn(2, 3, 7, 6, dtype=dt.float64)
    w = dt.randn(4, 3, 3, 2, dtype=dt.float64)
    kw = dict(stride=2, padding=1, dilation=(1, 2))
    y = F.conv2d(x, w, **kw)
    z = dt.randn(*y.shape, dtype=dt.float64)
    back = F.conv_transpose2d(z, w, output_padding=(0, 1), **kw)
    assert back.shape == x.shape
    np.testing.assert_allclose((y * z).sum().item(), (x * back).sum().item(), rtol=1e-10)
    assert F.conv_transpose1d(dt.randn(2, 3, 5), dt.randn(3, 2, 3), stride=2).shape == (2, 2, 11)


def test_conv_transpose_module_and_errors():
    m = dt.nn.ConvTranspose2d(3, 4, 3, stride=2, output_padding=1)
    assert m.weight.shape == (3, 4, 3, 3)
    assert repr(m) == "ConvTranspose2d(3, 4, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))"
    assert m(dt.randn(1, 3, 5, 5)).shape == (1, 4, 12, 12)
    assert dt.nn.ConvTranspose2d(3, 4, 3, stride=2)(dt.randn(1, 3, 5, 5), output_size=(12, 12)).shape == (
        1,
        4,
        12,
        12,
    )
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        dt.nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect")
    with pytest.raises(
        RuntimeError,
        match=r"Given transposed=1, weight of size \[3, 4, 3, 3\], expected "
        r"input\[2, 5, 5, 5\] to have 3 channels, but got 5 channels",
    ):
        F.conv_transpose2d(dt.randn(2, 5, 5, 5), dt.randn(3, 4, 3, 3))
    with pytest.raises(RuntimeError, match="output padding must be smaller than either stride or dilation"):
        F.conv_transpose2d(dt.randn(2, 3, 5, 5), dt.randn(3, 4, 3, 3), output_padding=1)


def test_algorithm_choice_and_what_backward_keeps(stride1_algorithm):
    """Stride 1 with enough channels per group uses the shifted products and keeps only the
    flat padded input for backward (K times less than im2col's columns); strided
    convolutions always use im2col. Both give the same output and gradients."""
    conv = importlib.import_module("disttorch.nn.functional.conv")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 16, 6, 5)).astype(np.float32)
    w = rng.standard_normal((8, 16, 3, 3)).astype(np.float32)
    geo = conv._Geometry((1, 1), ((1, 1), (1, 1)), (1, 1), 1, (3, 3), (6, 5), False, "conv2d")
    out, saved = conv._conv_arrays(x, w, geo)
    ref = reference_conv2d(x.astype(np.float64), w.astype(np.float64), None, (1, 1), (1, 1), (1, 1), 1)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    if stride1_algorithm == "shifted":
        xf, _ = saved
        assert xf.size == 2 * 16 * (8 * 7 + 2)  # padded 8x7 planes and a 2-element tail
    else:
        assert saved.size == 2 * 16 * 9 * 6 * 5
    strided = geo._replace(stride=(2, 2), out=(3, 3))
    assert not isinstance(conv._conv_arrays(x, w, strided)[1], tuple)


def test_default_threshold_picks_shifted_for_wide_layers(monkeypatch):
    monkeypatch.undo()  # the real MIN_CHANNELS
    conv = importlib.import_module("disttorch.nn.functional.conv")
    geo = conv._Geometry((1, 1), ((1, 1), (1, 1)), (1, 1), 1, (3, 3), (4, 4), False, "conv2d")
    x = np.zeros((1, shifted.MIN_CHANNELS, 4, 4), np.float32)
    assert isinstance(
        conv._conv_arrays(x, np.zeros((2, shifted.MIN_CHANNELS, 3, 3), np.float32), geo)[1], tuple
    )
    assert not isinstance(conv._conv_arrays(x[:, :1], np.zeros((2, 1, 3, 3), np.float32), geo)[1], tuple)


# ---------------------------------------------------------------------- parity with PyTorch
@pytest.mark.parity
@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(stride=2, padding=1),
        dict(padding="same", dilation=2),
        dict(groups=2, bias=False, padding=(1, 0)),
    ],
)
def test_conv2d_parity(torch, kw):
    theirs = torch.nn.Conv2d(4, 6, 3, **kw)
    ours = dt.nn.Conv2d(4, 6, 3, **kw)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(2, 4, 9, 8))


@pytest.mark.parity
@pytest.mark.parametrize(
    "kw",
    [
        dict(padding=1),
        dict(padding="same", dilation=(2, 1)),
        dict(groups=2, padding=(0, 2)),
        dict(stride=2, padding=1),
    ],
)
def test_wide_conv2d_parity(torch, kw):
    """16 and more input channels per group: stride-1 layers take the shifted products."""
    theirs = torch.nn.Conv2d(32, 24, 3, **kw)
    ours = dt.nn.Conv2d(32, 24, 3, **kw)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(3, 32, 10, 9))
    theirs = torch.nn.ConvTranspose2d(32, 16, 3, padding=1)
    ours = dt.nn.ConvTranspose2d(32, 16, 3, padding=1)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(2, 32, 6, 7))


@pytest.mark.parity
def test_conv1d_and_conv3d_parity(torch):
    theirs, ours = torch.nn.Conv1d(3, 5, 3, stride=2, padding=1), dt.nn.Conv1d(3, 5, 3, stride=2, padding=1)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(2, 3, 11))
    theirs, ours = torch.nn.Conv3d(2, 3, 2, padding=1), dt.nn.Conv3d(2, 3, 2, padding=1)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(2, 2, 3, 4, 3))


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_conv_padding_modes_parity(torch, mode):
    theirs = torch.nn.Conv2d(2, 3, 3, padding=1, padding_mode=mode)
    ours = dt.nn.Conv2d(2, 3, 3, padding=1, padding_mode=mode)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(2, 2, 5, 6))


@pytest.mark.parity
@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(stride=2, padding=1, output_padding=1),
        dict(stride=(2, 1), groups=2, dilation=(1, 2), bias=False),
    ],
)
def test_conv_transpose2d_parity(torch, kw):
    theirs = torch.nn.ConvTranspose2d(4, 6, 3, **kw)
    ours = dt.nn.ConvTranspose2d(4, 6, 3, **kw)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(2, 4, 5, 6))


@pytest.mark.parity
def test_conv_transpose1d_parity(torch):
    theirs, ours = torch.nn.ConvTranspose1d(3, 2, 4, stride=3), dt.nn.ConvTranspose1d(3, 2, 4, stride=3)
    copy_weights(ours, theirs)
    run_both(ours, theirs, randn(2, 3, 7))


def test_conv_default_init_matches_pytorch_distribution():
    conv = dt.nn.Conv2d(16, 32, 3)
    bound = 1 / np.sqrt(16 * 9)  # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), ..)
    w = conv.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.1 * bound
    assert np.abs(conv.bias.detach().numpy()).max() <= bound


def _half_conv_grads(lib, d, xs, ws, kw):
    g = np.random.default_rng(7)
    x, w, b = (
        lib.tensor(g.standard_normal(s).astype(np.float32)).half().requires_grad_() for s in (xs, ws, ws[:1])
    )
    y = getattr(lib.nn.functional, f"conv{d}d")(x, w, b, **kw)
    grads = lib.autograd.grad(
        y, (x, w, b), lib.tensor(g.standard_normal(tuple(y.shape)).astype(np.float32)).half()
    )
    return [t.detach().float().numpy() for t in (y, *grads)]


HALF_CONVS = {
    "padded": (2, (2, 4, 9, 9), (6, 4, 3, 3), dict(padding=1)),
    "strided": (2, (2, 4, 9, 9), (6, 4, 3, 3), dict(stride=2, padding=1)),
    "dilated_groups": (2, (2, 4, 9, 9), (6, 2, 3, 3), dict(dilation=2, groups=2)),
    "conv1d": (1, (3, 8, 20), (5, 8, 5), dict(stride=2, padding=2)),
    "dilated_batch": (2, (6, 3, 12, 12), (8, 3, 3, 3), dict(dilation=(2, 1), padding=2)),
    "conv3d": (3, (1, 3, 5, 5, 5), (4, 3, 3, 3, 3), dict(padding=1)),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(HALF_CONVS))
def test_float16_convolution_gradients_as_pytorch(torch, name):
    # they were float32 sums rounded once: PyTorch's float16 path rounds the input gradient's
    # columns and adds them in float16 (col2im), and rounds the weight gradient per image
    # (float32 sums in another order leave a rare element an ulp apart); the bias gradient
    # as PyTorch's: a dilated convolution's (its slow dilated path) summed image by image,
    # each image's float32 sum added to the float16 total
    ours, theirs = _half_conv_grads(dt, *HALF_CONVS[name]), _half_conv_grads(torch, *HALF_CONVS[name])
    for a, b in zip(ours[:3], theirs[:3]):
        assert np.mean(a != b) < 0.01
        np.testing.assert_allclose(a, b, rtol=2**-10, atol=2**-24)
    np.testing.assert_array_equal(ours[3], theirs[3])


@pytest.mark.parametrize("mode", ["zeros", "reflect"])
def test_conv_forward_with_another_weight(mode):
    """``Conv2d._conv_forward(x, w, b)`` convolves with the layer's settings and the weight
    given (LoRA's ConvLoRA, weight-standardised convolutions), gradients flowing into ``w``."""
    conv = dt.nn.Conv2d(2, 3, 3, stride=2, padding=1, padding_mode=mode, dtype=dt.float64)
    x = dt.randn(1, 2, 5, 6, dtype=dt.float64)
    w = (conv.weight * 2.0).detach().requires_grad_()
    out = conv._conv_forward(x, w, None)
    pad = F.pad(x, [1, 1, 1, 1], mode="reflect") if mode == "reflect" else x
    expected = F.conv2d(pad, w, None, 2, 0 if mode == "reflect" else 1)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy())
    assert gradcheck(lambda w: conv._conv_forward(x, w, conv.bias), (w,))
