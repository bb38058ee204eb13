"""Ops on quantized tensors between quantized layers (pooling, mean, flatten/reshape, cat,
relu/hardtanh/ReLU6, as functions, methods and modules): PyTorch's integer results bit for
bit, the input's scale and zero point kept."""

import numpy as np
import pytest

import disttorch as dt

pytestmark = pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor")


def _cases(lib):
    F = lib.nn.functional
    return {
        "mean23": lambda x, y: x.mean([2, 3]),
        "mean23_keepdim": lambda x, y: x.mean([2, 3], keepdim=True),
        "mean1": lambda x, y: x.mean(1),
        "torch.mean": lambda x, y: lib.mean(x, (2, 3)),
        "adaptive1": lambda x, y: F.adaptive_avg_pool2d(x, 1),
        "adaptive43": lambda x, y: F.adaptive_avg_pool2d(x, (4, 3)),
        "avg2": lambda x, y: F.avg_pool2d(x, 2),
        "avg3_pad": lambda x, y: F.avg_pool2d(x, 3, 2, 1),
        "avg3_pad_excluded": lambda x, y: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
        "avg2_ceil": lambda x, y: F.avg_pool2d(x, 2, ceil_mode=True),
        "max3": lambda x, y: F.max_pool2d(x, 3, 2, 1),
        "relu": lambda x, y: F.relu(x),
        "torch.relu": lambda x, y: lib.relu(x),
        "relu6": lambda x, y: F.relu6(x),
        "hardtanh": lambda x, y: F.hardtanh(x, -0.5, 0.7),
        "clamp": lambda x, y: lib.clamp(x, -1, 1),
        "cat_same": lambda x, y: lib.cat([x, x], 1),
        "cat_requantized": lambda x, y: lib.cat([x, y], 1),
        "flatten": lambda x, y: lib.flatten(x, 1),
        "reshape": lambda x, y: x.reshape(2, -1),
        "modules": lambda x, y: lib.nn.Sequential(
            lib.nn.MaxPool2d(2),
            lib.nn.ReLU6(),
            lib.nn.Hardtanh(),
            lib.nn.AdaptiveAvgPool2d((1, 1)),
            lib.nn.Flatten(),
        )(x),
    }


def _run(lib, seed):
    rng = np.random.default_rng(seed)
    out = {}
    for trial in range(6):
        scale, zp = float(rng.uniform(0.01, 0.1)), int(rng.integers(0, 200))
        x = lib.quantize_per_tensor(
            lib.tensor((rng.standard_normal((2, 5, 6, 7)) * 2).astype(np.float32)), scale, zp, lib.quint8
        )
        y = lib.quantize_per_tensor(
            lib.tensor((rng.standard_normal((2, 3, 6, 7)) * 2).astype(np.float32)), 0.07, 9, lib.quint8
        )
        for name, fn in _cases(lib).items():
            r = fn(x, y)
            out[name, trial] = (tuple(r.shape), r.q_scale(), r.q_zero_point(), r.int_repr().numpy())
    return out


@pytest.mark.parity
def test_integer_results_as_pytorch(torch):
    ours, theirs = _run(dt, 0), _run(torch, 0)
    for key, (shape, scale, zp, ints) in theirs.items():
        got = ours[key]
        assert got[:3] == (shape, scale, zp), key
        np.testing.assert_array_equal(got[3], ints, err_msg=str(key))


def test_averages_round_half_to_even_and_keep_qparams():
    x = dt.quantize_per_tensor(dt.tensor([[[[0.0, 0.1], [0.1, 0.1]]]]), 0.1, 3, dt.quint8)  # ints 3, 4, 4, 4
    pooled = dt.nn.functional.avg_pool2d(x, 2)
    assert pooled.int_repr().tolist() == [[[[4]]]]  # 3 + 3/4 = 3.75 -> 4
    half = dt.quantize_per_tensor(dt.tensor([[[[0.0, 0.1]]]]), 0.1, 3, dt.quint8)  # 3 + 1/2 -> 4 (even)
    assert half.mean([2, 3]).int_repr().tolist() == [[4]]
    assert (pooled.q_scale(), pooled.q_zero_point()) == (0.1, 3)
    r = dt.relu(dt.quantize_per_tensor(dt.tensor([-1.0, 1.0]), 0.5, 10, dt.quint8))
    assert r.int_repr().tolist() == [10, 12]
    with pytest.raises(NotImplementedError, match="per-channel"):
        dt.quantize_per_channel(dt.ones(2, 2), dt.tensor([0.1, 0.2]), dt.tensor([0, 0]), 0, dt.qint8).mean()


def test_ao_functional_refuses_float_inputs():
    qf = dt.ao.nn.quantized.functional
    x = dt.quantize_per_tensor(dt.randn(1, 2, 4, 4), 0.1, 5, dt.quint8)
    assert dt.equal(qf.avg_pool2d(x, 2).int_repr(), dt.nn.functional.avg_pool2d(x, 2).int_repr())
    assert qf.clamp(x, -0.2, 0.2).int_repr().max().item() == 7
    with pytest.raises(ValueError, match="Input to 'quantized.max_pool2d' must be quantized!"):
        qf.max_pool2d(dt.randn(1, 1, 2, 2), 2)
    assert type(dt.ao.nn.quantized.ReLU6()(x)).__name__ == "QuantizedTensor"
