"""Saving quantized tensors and quantized models' state_dicts in PyTorch's format: they load
back here and in PyTorch, and PyTorch's files load here."""

import io

import numpy as np
import pytest

import disttorch as dt
from disttorch.ao import quantization as aq

pytestmark = [
    pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor"),
    pytest.mark.filterwarnings("ignore:torch.ao.quantization is deprecated"),
]


def _quantized_model(lib, qlib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(16, 8), lib.nn.Linear(8, 4, bias=False))
    return qlib.quantize_dynamic(model, {lib.nn.Linear}, dtype=lib.qint8)


def _round_trip(obj):
    buf = io.BytesIO()
    dt.save(obj, buf)
    buf.seek(0)
    return dt.load(buf)


def test_quantized_tensors_round_trip():
    per_tensor = dt.quantize_per_tensor(dt.randn(3, 4), 0.05, 3, dt.quint8)
    per_channel = dt.quantize_per_channel(
        dt.randn(3, 4), dt.tensor([0.1, 0.2, 0.3]), dt.tensor([0, 1, 2]), 0, dt.qint8
    )
    back = _round_trip({"t": per_tensor, "c": per_channel, "d": [dt.qint8, dt.qint8, dt.float32, dt.float32]})
    assert back["t"].q_scale() == 0.05 and back["t"].q_zero_point() == 3 and back["t"].dtype is dt.quint8
    assert back["t"].int_repr().tolist() == per_tensor.int_repr().tolist()
    assert (
        back["c"].q_per_channel_scales().tolist() == per_channel.q_per_channel_scales().tolist()
        and back["c"].q_per_channel_axis() == 0
    )
    assert back["d"] == [dt.qint8, dt.qint8, dt.float32, dt.float32]  # a repeated dtype is memoized


def test_quantized_state_dict_round_trip():
    q = _quantized_model(dt, aq)
    fresh = _quantized_model(dt, aq)
    fresh[0].set_weight_bias(dt.quantize_per_tensor(dt.zeros(8, 16), 1.0, 0, dt.qint8), dt.zeros(8))
    fresh.load_state_dict(_round_trip(q.state_dict()))
    x = dt.randn(2, 16)
    np.testing.assert_array_equal(fresh(x).numpy(), q(x).numpy())


@pytest.mark.parity
def test_pytorch_loads_ours_and_we_load_theirs(torch, tmp_path):
    ours = _quantized_model(dt, aq)
    dt.save(ours.state_dict(), tmp_path / "ours.pt")
    theirs = _quantized_model(torch, torch.ao.quantization)
    theirs.load_state_dict(torch.load(tmp_path / "ours.pt"))
    assert theirs[0].weight().q_scale() == ours[0].weight().q_scale()
    np.testing.assert_array_equal(theirs[1].weight().int_repr().numpy(), ours[1].weight().int_repr().numpy())
    torch.save(theirs.state_dict(), tmp_path / "theirs.pt")
    again = _quantized_model(dt, aq)
    again.load_state_dict(dt.load(tmp_path / "theirs.pt"))
    x = np.random.default_rng(0).standard_normal((3, 16)).astype(np.float32)
    np.testing.assert_array_equal(again(dt.from_numpy(x)).numpy(), theirs(torch.from_numpy(x)).numpy())
