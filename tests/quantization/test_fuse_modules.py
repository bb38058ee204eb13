"""fuse_modules (conv + bn (+ relu), linear + relu, ...) and the fused quantized LinearReLU."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.ao import quantization as aq
from disttorch.ao.nn import intrinsic as nni
from disttorch.ao.nn.intrinsic import quantized as nniq

pytestmark = [
    pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor"),
    pytest.mark.filterwarnings("ignore:torch.ao.quantization is deprecated"),
]


def _model(lib, qlib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.bn, self.relu = lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.ReLU()
            self.quant, self.dequant = qlib.QuantStub(), qlib.DeQuantStub()
            self.fc1, self.relu2, self.fc2 = lib.nn.Linear(16, 32), lib.nn.ReLU(), lib.nn.Linear(32, 4)

        def forward(self, x):
            return self.dequant(self.fc2(self.relu2(self.fc1(self.quant(x)))))

    lib.manual_seed(0)
    model = M()
    model.bn.running_mean.uniform_(-1, 1)
    model.bn.running_var.uniform_(0.5, 2)
    return model.eval()


def test_fused_modules_compute_what_the_runs_computed():
    model = _model(dt, aq)
    fused = aq.fuse_modules(model, [["conv", "bn", "relu"], ["fc1", "relu2"]])
    assert type(fused.conv) is nni.ConvReLU2d and type(fused.bn) is dt.nn.Identity
    assert type(fused.fc1) is nni.LinearReLU and type(model.fc1) is dt.nn.Linear
    x = dt.randn(2, 3, 6, 6)
    np.testing.assert_allclose(
        fused.conv(x).detach().numpy(), model.relu(model.bn(model.conv(x))).detach().numpy(), atol=1e-5
    )
    assert repr(fused.fc1).startswith("LinearReLU(\n  (0): Linear(in_features=16")


def test_fused_linear_relu_quantizes_to_quantized_linear_relu():
    fused = aq.fuse_modules(_model(dt, aq), ["fc1", "relu2"])
    fused.qconfig = aq.default_qconfig
    prepared = aq.prepare(fused)
    assert hasattr(prepared.fc1, "activation_post_process") and not hasattr(
        prepared.fc1[0], "activation_post_process"
    )
    for _ in range(4):
        prepared(dt.randn(8, 16))
    del prepared.conv  # forward never runs it: its observer saw nothing
    q = aq.convert(prepared)
    assert type(q.fc1) is nniq.LinearReLU and repr(q.fc1).startswith("QuantizedLinearReLU(in_features=16")
    out = q.fc1(q.quant(dt.randn(3, 16)))
    assert out.int_repr().numpy().min() >= out.q_zero_point()


def test_errors():
    with pytest.raises(AssertionError, match="did not find fuser method"):
        aq.fuse_modules(_model(dt, aq), ["fc1", "conv"])
    model = _model(dt, aq).train()
    with pytest.raises(AssertionError, match="Fusion only for eval!"):  # fuse_modules_qat is for training
        aq.fuse_modules(model, ["conv", "bn"])
    model.bn.eval()
    with pytest.raises(AssertionError, match="must be in the same mode"):
        aq.fuse_modules_qat(model, ["conv", "bn"])


def test_fuse_modules_qat_keeps_batch_norm_and_prepare_qat_makes_qat_layers():
    from disttorch.ao.nn.intrinsic import qat as nniqat

    model = _model(dt, aq).train()
    fused = aq.fuse_modules_qat(model, [["conv", "bn", "relu"], ["fc1", "relu2"]])
    assert type(fused.conv) is nni.ConvBnReLU2d and type(fused.bn) is dt.nn.Identity and fused.bn.training
    assert fused.conv[1] is not model.bn and type(fused.fc1) is nni.LinearReLU
    fused.qconfig = aq.get_default_qat_qconfig("x86")
    prepared = aq.prepare_qat(fused)
    assert type(prepared.conv) is nniqat.ConvBnReLU2d and type(prepared.fc1) is nniqat.LinearReLU
    assert isinstance(prepared.conv.weight_fake_quant, aq.FusedMovingAvgObsFakeQuantize)
    assert prepared.conv.bn.training
    prepared.apply(nniqat.freeze_bn_stats)
    assert prepared.conv.freeze_bn and not prepared.conv.train().bn.training
    prepared.apply(nniqat.update_bn_stats)
    assert prepared.conv.bn.training


@pytest.mark.parity
def test_as_pytorch(torch):
    results = []
    for lib, qlib in ((torch, torch.ao.quantization), (dt, aq)):
        fused = qlib.fuse_modules(_model(lib, qlib), [["conv", "bn", "relu"], ["fc1", "relu2"]])
        fused.qconfig = qlib.default_qconfig
        prepared = qlib.prepare(fused)
        lib.manual_seed(1)
        for _ in range(4):
            prepared(lib.randn(8, 16))
        del prepared.conv  # forward never runs it: its observer saw nothing
        q = qlib.convert(prepared)
        x = np.random.default_rng(0).standard_normal((3, 16)).astype(np.float32)
        results.append((fused.conv[0].weight.detach().numpy(), q(lib.from_numpy(x)).numpy(), repr(q.fc1)))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(results[0][1], results[1][1], atol=1e-6)
    assert results[1][2] == results[0][2].replace("torch.", "disttorch.")
