"""``interpolate(..., antialias=True)`` (bilinear, bicubic, lanczos): the stretched filters,
float64 and uint8 results bitwise PyTorch's, float32 within a few units in the last place,
gradients (gradcheck, and PyTorch's), PyTorch's errors and node names."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck, gradgradcheck
from disttorch.nn import functional as DF
from disttorch.nn.functional._antialias import antialias_windows

rng = np.random.default_rng(5)
MODES = ["bilinear", "bicubic", "lanczos"]
GEOMETRIES = [
    ((2, 3, 32, 32), dict(size=(16, 16))),
    ((1, 2, 37, 53), dict(size=(10, 21))),
    ((1, 2, 20, 20), dict(size=(40, 33))),
    ((2, 1, 64, 48), dict(size=(7, 48))),
    ((1, 3, 50, 40), dict(scale_factor=(0.5, 1.7))),
    ((1, 2, 30, 30), dict(size=(11, 13), align_corners=True)),
    ((1, 1, 9, 9), dict(size=(1, 1))),
]


def _image(shape, dtype):
    if dtype == "uint8":
        return rng.integers(0, 256, shape).astype(np.uint8)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("mode", MODES)
def test_shrinking_averages_every_covered_pixel(mode):
    """Halving a width with the bilinear filter is the tent over four inputs, 1/8 3/8 3/8
    1/8, away from the edges (plain bilinear takes the mean of two); every filter keeps a
    constant image constant, at the edges too (the weights are renormalised there)."""
    first, count, weights = antialias_windows(12, 6, mode, None, False, np.float64)
    np.testing.assert_allclose(weights.sum(1), 1.0, rtol=1e-15)
    if mode == "bilinear":
        assert count[2] == 4 and first[2] == 3
        np.testing.assert_allclose(weights[2, :4], [1 / 8, 3 / 8, 3 / 8, 1 / 8], rtol=1e-15)
    flat = dt.full((1, 1, 12, 12), 3.0, dtype=dt.float64)
    out = DF.interpolate(flat, size=(6, 5), mode=mode, antialias=True)
    np.testing.assert_allclose(out.numpy(), 3.0, rtol=1e-14)


def test_uint8_keeps_uint8_and_saturates():
    x = dt.tensor(np.tile(np.array([0, 255] * 8, np.uint8), (1, 1, 16, 1)))
    out = DF.interpolate(x, size=(8, 5), mode="lanczos", antialias=True)
    assert out.dtype == dt.uint8 and out.numpy().min() >= 0 and out.numpy().max() <= 255
    assert not out.requires_grad


@pytest.mark.parametrize("mode", MODES)
def test_gradients(mode):
    x = dt.tensor(rng.standard_normal((1, 2, 9, 8)), requires_grad=True)
    for size in ((4, 3), (12, 11)):
        assert gradcheck(lambda t, s=size: DF.interpolate(t, size=s, mode=mode, antialias=True), (x,))
    assert gradgradcheck(lambda t: DF.interpolate(t, size=(5, 3), mode=mode, antialias=True), (x,))


def test_errors_and_unchanged_sizes():
    x = dt.tensor(rng.standard_normal((1, 2, 6, 6)))
    with pytest.raises(ValueError, match="restricted to bilinear, bicubic, and lanczos"):
        DF.interpolate(x, size=(3, 3), mode="nearest", antialias=True)
    with pytest.raises(ValueError, match="restricted to bilinear"):
        DF.interpolate(dt.tensor(rng.standard_normal((1, 2, 6))), size=3, mode="linear", antialias=True)
    with pytest.raises(ValueError, match="Lanczos mode requires antialias=True"):
        DF.interpolate(x, size=(3, 3), mode="lanczos")
    with pytest.raises(ValueError, match="does not support align_corners=True"):
        DF.interpolate(x, size=(3, 3), mode="lanczos", antialias=True, align_corners=True)
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        DF.interpolate(x.half(), size=(3, 3), mode="bilinear", antialias=True)
    with pytest.raises(NotImplementedError, match="Input Error.*lanczos"):
        DF.interpolate(dt.tensor(rng.standard_normal((1, 2, 6, 6, 6))), size=3, mode="lanczos")
    same = DF.interpolate(x, size=(6, 6), mode="bicubic", antialias=True)
    assert np.array_equal(same.numpy(), x.numpy()) and same.data_ptr() != x.data_ptr()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["float64", "uint8", "float32"])
def test_values_match_pytorch(torch, mode, dtype):
    """float64 and uint8: PyTorch's bits; float32: within 8 units in the last place."""
    for shape, kw in GEOMETRIES:
        if mode == "lanczos" and kw.get("align_corners"):
            continue
        x = _image(shape, dtype)
        expected = torch.nn.functional.interpolate(torch.tensor(x), mode=mode, antialias=True, **kw).numpy()
        got = DF.interpolate(dt.tensor(x), mode=mode, antialias=True, **kw).numpy()
        assert got.dtype == expected.dtype and got.shape == expected.shape
        if dtype == "float32":
            np.testing.assert_allclose(got, expected, rtol=0, atol=8 * np.spacing(np.abs(expected).max()))
        else:
            assert np.array_equal(got, expected), (shape, kw)


@pytest.mark.parametrize("mode", MODES)
def test_gradients_and_node_match_pytorch(torch, mode):
    x = rng.standard_normal((2, 3, 17, 19))
    for kw in (dict(size=(7, 9)), dict(size=(25, 31)), dict(scale_factor=0.4)):
        ours = dt.tensor(x, requires_grad=True)
        theirs = torch.tensor(x, requires_grad=True)
        out = DF.interpolate(ours, mode=mode, antialias=True, **kw)
        ref = torch.nn.functional.interpolate(theirs, mode=mode, antialias=True, **kw)
        assert out.grad_fn.name() == ref.grad_fn.name()
        g = rng.standard_normal(tuple(ref.shape))
        out.backward(dt.tensor(g))
        ref.backward(torch.tensor(g))
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize(
    "shape, mode, dtype, kernel",
    [
        ((1, 1, 4), "nearest", "int64", "compute_indices_weights_nearest"),
        ((1, 1, 4, 4), "nearest", "int32", "upsample_nearest2d_channels_last"),
        ((1, 1, 4), "linear", "uint8", "compute_indices_weights_linear"),
        ((1, 1, 4, 4), "bilinear", "int64", "upsample_bilinear2d_channels_last"),
        ((1, 1, 4, 4), "bicubic", "bool", "compute_indices_weights_cubic"),
        ((1, 1, 2, 2, 2), "trilinear", "uint8", "compute_indices_weights_linear"),
        ((1, 1, 4, 4), "area", "uint8", "adaptive_avg_pool2d"),
        ((1, 1, 2, 2, 2), "area", "int64", "adaptive_avg_pool3d_cpu"),
    ],
)
def test_integer_inputs_pytorch_has_no_kernel_for(shape, mode, dtype, kernel):
    x = dt.zeros(shape, dtype=getattr(dt, dtype))
    with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for'):
        DF.interpolate(x, scale_factor=2, mode=mode)


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear", "bicubic"])
@pytest.mark.parametrize(
    "geometry", [dict(size=(5, 7)), dict(scale_factor=1.5), dict(size=(3, 9), align_corners=True)]
)
def test_uint8_resizing_is_pytorchs(torch, mode, geometry):
    """uint8 nearest and bilinear are PyTorch's bits; bicubic within one unit."""
    if mode.startswith("nearest") and "align_corners" in geometry:
        return
    a = _image((1, 2, 6, 5), "uint8")
    got = DF.interpolate(dt.tensor(a), mode=mode, **geometry).numpy().astype(int)
    want = torch.nn.functional.interpolate(torch.tensor(a), mode=mode, **geometry).numpy().astype(int)
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= (1 if mode == "bicubic" else 0)
