"""Quantized tensors: quantize_per_tensor / quantize_per_channel, their accessors, repr and
errors; integer representations bit for bit equal to PyTorch's (fbgemm's rounding)."""

import warnings

import numpy as np
import pytest

import disttorch as dt

pytestmark = pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor")

QDTYPES = [("quint8", np.uint8), ("qint8", np.int8), ("qint32", np.int32)]


def _values(seed: int, n: int, scale: float) -> np.ndarray:
    """Random floats plus exact ties (k + 0.5) * scale, where rounding rules differ."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * rng.uniform(0.1, 100)).astype(np.float32)
    x[:100] = ((np.arange(100) - 50 + 0.5) * np.float32(scale)).astype(np.float32)
    return rng.permutation(x)


def test_dtypes_and_qschemes():
    assert repr(dt.quint8) == "disttorch.quint8" and dt.qint32.itemsize == 4
    assert not dt.qint8.is_floating_point and not dt.qint8.is_complex
    with pytest.raises(RuntimeError, match="isSignedType not supported for quantized types"):
        dt.qint8.is_signed
    assert repr(dt.per_channel_affine) == "disttorch.per_channel_affine"
    assert isinstance(dt.per_tensor_affine, dt.qscheme)


def test_round_trip_and_accessors():
    x = dt.tensor([[-1.0, 0.5, 0.25, 2.6], [0.15, 0.05, -0.25, 100.0]])
    q = dt.quantize_per_tensor(x, 0.1, 10, dt.quint8)
    assert q.is_quantized and not x.is_quantized
    assert q.dtype is dt.quint8 and q.qscheme() is dt.per_tensor_affine
    assert q.q_scale() == 0.1 and q.q_zero_point() == 10
    assert q.int_repr().tolist() == [[0, 15, 12, 36], [12, 10, 8, 255]]
    assert q.int_repr().dtype is dt.uint8 and q.shape == (2, 4) and q.element_size() == 1
    np.testing.assert_allclose(q.dequantize().numpy(), [[-1, 0.5, 0.2, 2.6], [0.2, 0, -0.2, 24.5]], rtol=1e-6)
    assert dt.dequantize(q).dtype is dt.float32 and x.dequantize() is x
    assert q.view(8).int_repr().tolist() == [0, 15, 12, 36, 12, 10, 8, 255]
    assert q[0].int_repr().tolist() == [0, 15, 12, 36] and q.t().shape == (4, 2)
    assert q.clone().q_zero_point() == 10 and q.detach().dtype is dt.quint8


def test_per_channel_accessors():
    x = dt.tensor([[-1.0, 0.5, 0.25, 2.6], [0.15, 0.05, -0.25, 100.0]])
    q = dt.quantize_per_channel(x, dt.tensor([0.1, 0.2]), dt.tensor([0, 1]), 0, dt.qint8)
    assert q.qscheme() is dt.per_channel_affine and q.q_per_channel_axis() == 0
    assert q.q_per_channel_scales().dtype is dt.float64 and q.q_per_channel_zero_points().tolist() == [0, 1]
    assert q.int_repr().tolist() == [[-10, 5, 2, 26], [2, 1, 0, 127]]
    with pytest.raises(RuntimeError, match="kPerTensorAffine"):
        q.q_scale()
    with pytest.raises(RuntimeError, match="kPerChannelAffine"):
        dt.quantize_per_tensor(x, 0.1, 0, dt.qint8).q_per_channel_scales()


def torch_repr(obj) -> str:
    """``repr(obj)`` printing ``torch.`` as under the ``import torch`` alias (PyTorch's line
    widths); sys.modules is restored at once, so the real PyTorch keeps working."""
    import sys

    real = sys.modules.get("torch")
    sys.modules["torch"] = dt
    try:
        return repr(obj)
    finally:
        if real is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = real


def test_repr_as_pytorch_prints():
    x = dt.tensor([[-1.0, 0.5, 0.25, 2.6], [0.15, 0.05, -0.25, 100.0]])
    assert torch_repr(dt.quantize_per_tensor(x, 0.1, 10, dt.quint8)) == (
        "tensor([[-1.0000,  0.5000,  0.2000,  2.6000],\n"
        "        [ 0.2000,  0.0000, -0.2000, 24.5000]], size=(2, 4), dtype=torch.quint8,\n"
        "       quantization_scheme=torch.per_tensor_affine, scale=0.1, zero_point=10)"
    )
    assert repr(dt.quantize_per_tensor(dt.zeros(0), 0.5, 0, dt.quint8)).startswith(
        "tensor([], size=(0,), dtype="
    )


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda x: dt.quantize_per_tensor(x, 0.1, 1, dt.int8),
            RuntimeError,
            "ScalarType Char is not supported in new_qtensor.",
        ),
        (
            lambda x: dt.quantize_per_tensor(x.double(), 0.1, 1, dt.quint8),
            RuntimeError,
            "Quantize only works on Float Tensor, got Double",
        ),
        (
            lambda x: dt.quantize_per_tensor(x, 0.1, 300, dt.quint8),
            RuntimeError,
            "zero_point 300 is above upper bound",
        ),
        (
            lambda x: dt.quantize_per_tensor(x, 0.1, -1, dt.quint8),
            RuntimeError,
            "zero_point -1 is below lower bound",
        ),
        (
            lambda x: dt.quantize_per_channel(x, dt.tensor([0.1, 0.2]), dt.tensor([0, 1]), 2, dt.qint8),
            RuntimeError,
            r"Channel axis out of range in per channel affine quantization. Got: 2Expected: \[0, 2\)",
        ),
        (
            lambda x: dt.quantize_per_channel(x, dt.tensor([0.1, 0.2, 0.3]), dt.tensor([0, 1]), 0, dt.qint8),
            RuntimeError,
            "number of elements in scales and zero_points must match",
        ),
        (
            lambda x: dt.quantize_per_tensor(x, 0.1, 1, dt.quint8).requires_grad_(),
            RuntimeError,
            "only Tensors of floating point dtype",
        ),
        (lambda x: dt.quantize_per_tensor(x, 0.1, 1, dt.quint8) + 1, NotImplementedError, "QuantizedCPU"),
    ],
)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(dt.ones(2, 4))


def test_deprecation_warned_once():
    import disttorch._quantize as qmod

    qmod._warned[0] = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dt.quantize_per_tensor(dt.ones(2), 0.1, 0, dt.qint8)
        dt.quantize_per_tensor(dt.ones(2), 0.1, 0, dt.qint8)
    assert sum("deprecated" in str(w.message) for w in caught) == 1


def test_pickle_and_deepcopy_keep_the_map():
    import copy
    import pickle

    q = dt.quantize_per_channel(
        dt.randn(3, 4), dt.tensor([0.1, 0.2, 0.3]), dt.tensor([0, 1, 2]), 0, dt.quint8
    )
    for other in (pickle.loads(pickle.dumps(q)), copy.deepcopy(q)):
        assert other.qscheme() is dt.per_channel_affine and other.q_per_channel_axis() == 0
        assert other.int_repr().tolist() == q.int_repr().tolist()


@pytest.mark.parity
@pytest.mark.parametrize("name, np_dtype", QDTYPES)
@pytest.mark.parametrize("n", [7, 1000, 1003])
def test_int_repr_bitwise_as_pytorch(torch, name, np_dtype, n):
    rng = np.random.default_rng(n)
    lo, hi = np.iinfo(np_dtype).min, np.iinfo(np_dtype).max
    for seed in range(20):
        scale = float(rng.choice([0.1, 0.25, 0.00214854861, rng.uniform(1e-3, 2)]))
        zp = int(rng.integers(max(lo, -1000), min(hi, 1000) + 1))
        x = _values(seed, max(n, 100), scale)[:n]
        ours = dt.quantize_per_tensor(dt.from_numpy(x), scale, zp, getattr(dt, name))
        theirs = torch.quantize_per_tensor(torch.from_numpy(x), scale, zp, getattr(torch, name))
        np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())
        np.testing.assert_array_equal(ours.dequantize().numpy(), theirs.dequantize().numpy())


@pytest.mark.parity
@pytest.mark.parametrize("name, np_dtype", QDTYPES)
@pytest.mark.parametrize("axis", [0, 1])
def test_per_channel_bitwise_as_pytorch(torch, name, np_dtype, axis):
    rng = np.random.default_rng(axis)
    x = _values(3, 1200, 0.1).reshape(30, 40)
    n = x.shape[axis]
    scales = rng.uniform(1e-3, 1, n)
    scales[:5] = 0.1
    zps = rng.integers(max(np.iinfo(np_dtype).min, -100), min(np.iinfo(np_dtype).max, 100) + 1, n)
    ours = dt.quantize_per_channel(
        dt.from_numpy(x), dt.from_numpy(scales), dt.from_numpy(zps), axis, getattr(dt, name)
    )
    theirs = torch.quantize_per_channel(
        torch.from_numpy(x), torch.from_numpy(scales), torch.from_numpy(zps), axis, getattr(torch, name)
    )
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())
    np.testing.assert_array_equal(ours.dequantize().numpy(), theirs.dequantize().numpy())
    assert torch_repr(ours) == repr(theirs)


@pytest.mark.parity
def test_repr_matches_pytorch(torch):
    x = np.array([[-1.0, 0.5, 0.25, 2.6], [0.15, 0.05, -0.25, 100.0]], dtype=np.float32)
    for name in ("quint8", "qint8", "qint32"):
        ours = dt.quantize_per_tensor(dt.from_numpy(x), 0.1, 0, getattr(dt, name))
        theirs = torch.quantize_per_tensor(torch.from_numpy(x), 0.1, 0, getattr(torch, name))
        assert torch_repr(ours) == repr(theirs)
