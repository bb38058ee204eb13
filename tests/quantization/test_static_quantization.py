"""Eager static quantization: QuantStub/DeQuantStub, prepare (observers), calibration, convert
to quantized Linear/Quantize/DeQuantize (nn.ReLU takes quantized tensors); the quantized Linear
bit for bit as PyTorch's (fbgemm's 16-bit pair saturation included, on CPUs without VNNI)."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.ao import quantization as aq
from disttorch.ao.nn import quantized as nnq

pytestmark = [
    pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor"),
    pytest.mark.filterwarnings("ignore:torch.ao.quantization is deprecated"),
]


def _model(lib, qlib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant = qlib.QuantStub(), qlib.DeQuantStub()
            self.fc1, self.relu, self.fc2 = lib.nn.Linear(16, 32), lib.nn.ReLU(), lib.nn.Linear(32, 4)

        def forward(self, x):
            return self.dequant(self.fc2(self.relu(self.fc1(self.quant(x)))))

    lib.manual_seed(0)
    model = M().eval()
    model.qconfig = qlib.default_qconfig
    return model


def _calibrated(lib, qlib):
    model = _model(lib, qlib)
    prepared = qlib.prepare(model)
    for _ in range(4):
        prepared(lib.randn(8, 16))
    return model, prepared, qlib.convert(prepared)


def test_prepare_calibrate_convert():
    model, prepared, q = _calibrated(dt, aq)
    assert isinstance(prepared.fc1.activation_post_process, aq.MinMaxObserver)
    assert not hasattr(prepared.relu, "activation_post_process") and not hasattr(
        model.fc1, "activation_post_process"
    )
    assert [type(m) for m in (q.quant, q.fc1, q.relu, q.fc2, q.dequant)] == [
        nnq.Quantize,
        nnq.Linear,
        dt.nn.ReLU,  # takes quantized tensors itself, as in PyTorch
        nnq.Linear,
        nnq.DeQuantize,
    ]
    assert repr(q.relu) == "ReLU()" and repr(q.dequant) == "DeQuantize()"
    assert repr(q.fc2).startswith("QuantizedLinear(in_features=32, out_features=4, scale=")
    x = dt.randn(5, 16)
    np.testing.assert_allclose(q(x).numpy(), model(x).detach().numpy(), atol=0.05)
    assert q.fc1(q.quant(x)).dtype is dt.quint8
    assert list(q.state_dict())[:4] == ["quant.scale", "quant.zero_point", "fc1.scale", "fc1.zero_point"]


def test_errors():
    _, _, q = _calibrated(dt, aq)
    with pytest.raises(RuntimeError, match="expects a quint8 quantized input"):
        q.fc1(dt.randn(2, 16))
    with pytest.raises(AssertionError, match="must have observer attached"):
        nnq.Linear.from_float(dt.nn.Linear(2, 2))
    with pytest.warns(UserWarning, match="None of the submodule got qconfig applied"):
        aq.prepare(dt.nn.Sequential(dt.nn.Linear(2, 2)))


@pytest.mark.parity
def test_converted_model_as_pytorch(torch):
    theirs = _calibrated(torch, torch.ao.quantization)[2]
    ours = _calibrated(dt, aq)[2]
    assert ours.quant.scale.tolist() == theirs.quant.scale.tolist()
    assert ours.fc2.zero_point == theirs.fc2.zero_point
    x = np.random.default_rng(0).standard_normal((5, 16)).astype(np.float32)
    # the calibrated float ranges may differ in their last bit (float matmul rounding)
    np.testing.assert_allclose(ours(dt.from_numpy(x)).numpy(), theirs(torch.from_numpy(x)).numpy(), atol=1e-6)


@pytest.mark.parity
def test_quantized_linear_bitwise_as_pytorch(torch):
    rng = np.random.default_rng(0)
    for _ in range(20):
        k, n, b = int(rng.integers(1, 60)), int(rng.integers(1, 30)), int(rng.integers(1, 6))
        x = (rng.standard_normal((b, k)) * 2).astype(np.float32)  # wide: fbgemm's int16 pairs saturate
        w = (rng.standard_normal((n, k)) * 0.3).astype(np.float32)
        bias = rng.standard_normal(n).astype(np.float32)
        x_scale, x_zp, w_scale = (
            float(rng.uniform(0.01, 0.05)),
            int(rng.integers(100, 150)),
            float(rng.uniform(1e-3, 1e-2)),
        )
        out_scale, out_zp = float(rng.uniform(0.02, 0.2)), int(rng.integers(50, 200))
        outs = []
        for lib, qnn in ((torch, torch.ao.nn.quantized), (dt, nnq)):
            layer = qnn.Linear(k, n)
            layer.set_weight_bias(
                lib.quantize_per_tensor(lib.from_numpy(w), w_scale, 0, lib.qint8), lib.from_numpy(bias)
            )
            layer.scale, layer.zero_point = out_scale, out_zp
            outs.append(
                layer(lib.quantize_per_tensor(lib.from_numpy(x), x_scale, x_zp, lib.quint8))
                .int_repr()
                .numpy()
            )
        np.testing.assert_array_equal(outs[0], outs[1])
