"""fake_quantize_per_tensor_affine / fake_quantize_per_channel_affine: values bit for bit as
PyTorch's, and the straight-through gradient (a finite-difference gradcheck does not apply:
the forward is a step function whose true derivative is zero almost everywhere; PyTorch
defines the gradient as the mask of unclamped elements, and so do we)."""

import numpy as np
import pytest

import disttorch as dt


def _x(seed=0, n=2000, scale=0.1):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 6).astype(np.float32)
    x[:100] = ((np.arange(100) - 50 + 0.5) * np.float32(scale)).astype(np.float32)  # ties
    return x


def test_values_and_straight_through_gradient():
    x = dt.tensor([-20.0, -0.25, 0.0, 0.14, 0.15, 12.0], requires_grad=True)
    y = dt.fake_quantize_per_tensor_affine(x, 0.1, 3, -128, 127)
    np.testing.assert_allclose(y.detach().numpy(), [-13.1, -0.2, 0.0, 0.1, 0.2, 12.0], rtol=1e-6)
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0]  # -20 was clamped
    assert y.grad_fn.name() == "FakeQuantizePerTensorAffineCachemaskBackward0"


def test_per_channel_gradient_mask():
    x = dt.tensor([[1.0, 30.0], [1.0, 30.0]], requires_grad=True)
    y = dt.fake_quantize_per_channel_affine(
        x, dt.tensor([0.1, 1.0]), dt.tensor([0, 0], dtype=dt.int32), 0, -128, 127
    )
    y.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0], [1.0, 1.0]]
    assert y.detach().tolist() == [[1.0, pytest.approx(12.7)], [1.0, 30.0]]


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda x: dt.fake_quantize_per_tensor_affine(x, 0.1, 3, 5, 1),
            RuntimeError,
            "`quant_min` should be less than",
        ),
        (
            lambda x: dt.fake_quantize_per_tensor_affine(x, 0.1, 300, -128, 127),
            RuntimeError,
            "`zero_point` must be between",
        ),
        (
            lambda x: dt.fake_quantize_per_channel_affine(
                x.view(2, 2), dt.tensor([0.1, 0.1]), dt.tensor([0, 0], dtype=dt.int32), 2, -128, 127
            ),
            IndexError,
            "Dimension out of range",
        ),
        (
            lambda x: dt.fake_quantize_per_channel_affine(
                x.view(2, 2), dt.tensor([0.1, 0.1]), dt.tensor([0, 0]), 0, -128, 127
            ),
            RuntimeError,
            "Zero-point must be Int32, Float or Half, found Long",
        ),
    ],
)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(dt.ones(4))


@pytest.mark.parity
@pytest.mark.parametrize("np_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("qrange", [(-128, 127), (0, 255), (0, 15)])
def test_per_tensor_as_pytorch(torch, np_dtype, qrange):
    x = _x().astype(np_dtype)
    zp = (qrange[0] + qrange[1]) // 2
    grads = []
    for lib in (torch, dt):
        t = lib.from_numpy(x.copy()).requires_grad_()
        y = lib.fake_quantize_per_tensor_affine(t, 0.1, zp, *qrange)
        (y * lib.from_numpy(np.arange(x.size, dtype=np_dtype))).sum().backward()
        grads.append((y.detach().numpy(), t.grad.numpy()))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])


@pytest.mark.parity
@pytest.mark.parametrize("axis", [0, 1])
def test_per_channel_as_pytorch(torch, axis):
    x = _x(1).reshape(40, 50)
    rng = np.random.default_rng(axis)
    scales = rng.uniform(0.01, 0.2, x.shape[axis]).astype(np.float32)
    zps = rng.integers(-20, 20, x.shape[axis]).astype(np.int32)
    results = []
    for lib in (torch, dt):
        t = lib.from_numpy(x.copy()).requires_grad_()
        y = lib.fake_quantize_per_channel_affine(
            t, lib.from_numpy(scales), lib.from_numpy(zps), axis, -128, 127
        )
        y.sum().backward()
        results.append((y.detach().numpy(), t.grad.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
