"""Static quantized Conv2d and fused ConvReLU2d: made by fuse_modules/prepare/convert, bit for
bit as PyTorch's for 7-bit activations (its default qconfigs), per-tensor and per-channel."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.ao import quantization as aq
from disttorch.ao.nn import quantized as nnq
from disttorch.ao.nn.intrinsic import quantized as nniq

pytestmark = [
    pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor"),
    pytest.mark.filterwarnings("ignore:torch.ao.quantization is deprecated"),
]


def _cnn(lib, qlib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant = qlib.QuantStub(), qlib.DeQuantStub()
            self.conv, self.bn, self.relu = (
                lib.nn.Conv2d(3, 8, 3, padding=1),
                lib.nn.BatchNorm2d(8),
                lib.nn.ReLU(),
            )
            self.conv2 = lib.nn.Conv2d(8, 8, 3, stride=2, groups=2, bias=False)
            self.fc = lib.nn.Linear(72, 4)

        def forward(self, x):
            x = self.conv2(self.relu(self.bn(self.conv(self.quant(x)))))
            return self.dequant(self.fc(x.reshape(x.shape[0], -1)))

    lib.manual_seed(0)
    model = M()
    model.bn.running_mean.uniform_(-1, 1)
    model.bn.running_var.uniform_(0.5, 2)
    return model.eval()


def _quantized(lib, qlib, per_channel):
    model = qlib.fuse_modules(_cnn(lib, qlib), [["conv", "bn", "relu"]])
    weight = qlib.default_per_channel_weight_observer if per_channel else qlib.default_weight_observer
    model.qconfig = qlib.QConfig(activation=qlib.default_observer, weight=weight)
    prepared = qlib.prepare(model)
    lib.manual_seed(1)
    for _ in range(3):
        prepared(lib.randn(4, 3, 8, 8))
    return model, qlib.convert(prepared)


def test_convert_cnn():
    model, q = _quantized(dt, aq, per_channel=True)
    assert type(q.conv) is nniq.ConvReLU2d and type(q.conv2) is nnq.Conv2d
    assert repr(q.conv2).startswith("QuantizedConv2d(8, 8, kernel_size=(3, 3), stride=(2, 2), scale=")
    assert repr(q.conv2).endswith(", groups=2, bias=False)")
    assert q.conv.weight().qscheme() is dt.per_channel_affine
    x = dt.randn(2, 3, 8, 8)
    np.testing.assert_allclose(q(x).numpy(), model(x).detach().numpy(), atol=0.05)
    assert list(q.state_dict())[2:6] == ["conv.weight", "conv.bias", "conv.scale", "conv.zero_point"]
    with pytest.raises(RuntimeError, match="expects a 4-d quint8 quantized input"):
        q.conv2(x)


@pytest.mark.parity
@pytest.mark.parametrize("per_channel", [False, True])
def test_cnn_as_pytorch(torch, per_channel):
    _, theirs = _quantized(torch, torch.ao.quantization, per_channel)
    _, ours = _quantized(dt, aq, per_channel)
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    their_conv = theirs.conv(theirs.quant(torch.from_numpy(x)))
    our_conv = ours.conv(ours.quant(dt.from_numpy(x)))
    np.testing.assert_array_equal(our_conv.int_repr().numpy(), their_conv.int_repr().numpy())
    np.testing.assert_array_equal(
        ours.conv2(our_conv).int_repr().numpy(), theirs.conv2(their_conv).int_repr().numpy()
    )
    np.testing.assert_allclose(ours(dt.from_numpy(x)).numpy(), theirs(torch.from_numpy(x)).numpy(), atol=1e-6)


def test_quantized_batch_norm_by_hand():
    bn = nnq.BatchNorm2d(2)
    bn.scale, bn.zero_point = dt.tensor(0.1), dt.tensor(10)
    x = dt.quantize_per_tensor(dt.tensor([[[[1.0]], [[-1.0]]]]), 0.05, 20, dt.quint8)
    y = bn(x)  # fresh statistics: the identity (up to eps)
    assert (
        repr(bn)
        == "QuantizedBatchNorm2d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    )
    assert y.int_repr().flatten().tolist() == [20, 0] and y.q_scale() == pytest.approx(0.1)


@pytest.mark.parity
def test_quantized_batch_norm_as_pytorch(torch):
    rng = np.random.default_rng(0)
    c = 4
    x = (rng.standard_normal((2, c, 5, 5)) * 2).astype(np.float32)
    params = [rng.uniform(0.5, 2, c), rng.standard_normal(c), rng.standard_normal(c), rng.uniform(0.5, 2, c)]
    outs = []
    for lib, qnn in ((torch, torch.ao.nn.quantized), (dt, nnq)):
        bn = qnn.BatchNorm2d(c)
        for name, value in zip(("weight", "bias", "running_mean", "running_var"), params, strict=True):
            getattr(bn, name).data = lib.from_numpy(value.astype(np.float32))
        bn.scale, bn.zero_point = lib.tensor(0.043), lib.tensor(77)
        outs.append(bn(lib.quantize_per_tensor(lib.from_numpy(x), 0.021, 64, lib.quint8)).int_repr().numpy())
    np.testing.assert_array_equal(outs[0], outs[1])
