"""Quantization-aware training: MovingAverageMinMaxObserver, FakeQuantize, default_qat_qconfig,
prepare_qat (QAT Linear/Conv2d with fake-quantized weights, fake-quantized outputs), training
with straight-through gradients, convert to quantized modules; as PyTorch step by step."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.ao import quantization as aq
from disttorch.ao.nn import qat as nnqat
from disttorch.ao.nn import quantized as nnq

pytestmark = [
    pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor"),
    pytest.mark.filterwarnings("ignore:torch.ao.quantization is deprecated"),
    pytest.mark.filterwarnings("ignore:Please use quant_min and quant_max"),
]


def _model(lib, qlib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant = qlib.QuantStub(), qlib.DeQuantStub()
            self.conv, self.relu, self.fc = lib.nn.Conv2d(3, 4, 3), lib.nn.ReLU(), lib.nn.Linear(64, 3)

        def forward(self, x):
            x = self.relu(self.conv(self.quant(x)))
            return self.dequant(self.fc(x.reshape(x.shape[0], -1)))

    lib.manual_seed(0)
    model = M().train()
    model.qconfig = qlib.default_qat_qconfig
    return model


def _train(lib, qlib, steps=4):
    prepared = qlib.prepare_qat(_model(lib, qlib))
    opt = lib.optim.SGD(prepared.parameters(), lr=0.05)
    lib.manual_seed(1)
    losses = []
    for _ in range(steps):
        x, target = lib.randn(8, 3, 6, 6), lib.randn(8, 3)
        loss = ((prepared(x) - target) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return prepared, losses


def test_moving_average_observer_and_fake_quantize():
    obs = aq.MovingAverageMinMaxObserver(averaging_constant=0.5)
    obs(dt.tensor([-1.0, 1.0]))
    obs(dt.tensor([-3.0, 2.0]))
    assert obs.min_val.item() == -2.0 and obs.max_val.item() == 1.5
    fq = aq.default_fake_quant()
    y = fq(dt.tensor([-1.0, 0.0, 2.0]))
    assert fq.quant_max == 127 and fq.zero_point.dtype is dt.int32
    np.testing.assert_allclose(y.numpy(), [-1.0, 0.0, 2.0], atol=float(fq.scale.item()))
    fq.apply(aq.disable_fake_quant)
    assert fq(dt.tensor([0.123])).item() == pytest.approx(0.123)


def test_prepare_qat_train_convert():
    prepared, losses = _train(dt, aq)
    assert type(prepared.conv) is nnqat.Conv2d and type(prepared.fc) is nnqat.Linear
    assert isinstance(prepared.fc.activation_post_process, aq.FakeQuantize)
    assert all(np.isfinite(losses))
    q = aq.convert(prepared.eval())
    assert type(q.conv) is nnq.Conv2d and type(q.fc) is nnq.Linear
    x = dt.randn(2, 3, 6, 6)
    np.testing.assert_allclose(q(x).numpy(), prepared(x).detach().numpy(), atol=0.05)
    with pytest.raises(AssertionError, match="training mode"):
        aq.prepare_qat(_model(dt, aq).eval())


@pytest.mark.parity
def test_training_and_conversion_as_pytorch(torch):
    ours, our_losses = _train(dt, aq)
    theirs, their_losses = _train(torch, torch.ao.quantization)
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-5)
    assert repr(ours.fc.weight_fake_quant).replace("disttorch.", "torch.") == repr(
        theirs.fc.weight_fake_quant
    )
    q_ours, q_theirs = aq.convert(ours.eval()), torch.ao.quantization.convert(theirs.eval())
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(
        q_ours(dt.from_numpy(x)).numpy(), q_theirs(torch.from_numpy(x)).numpy(), atol=1e-6
    )


def _fake_quantizers(lib, seed: int) -> list:
    """What the default QAT fake quantizers (fused and not, per tensor and per channel) give
    over a few steps, the observer switched off half way."""
    aq = lib.ao.quantization
    rng = np.random.default_rng(seed)
    modules = [
        aq.get_default_qat_qconfig("x86").activation(),
        aq.default_fused_per_channel_wt_fake_quant(),
        aq.default_fused_wt_fake_quant(),
        aq.default_per_channel_weight_fake_quant(),
        aq.get_default_qat_qconfig("qnnpack", version=0).activation(),
    ]
    out = []
    for step in range(4):
        x = lib.tensor(
            (rng.standard_normal((6, 5)) * rng.uniform(0.01, 5) + rng.uniform(-3, 3)).astype(np.float32)
        )
        x[2] = -abs(x[2])  # a channel of negative values only: fbgemm's zero point 127
        if step == 2:
            for m in modules:
                m.apply(aq.disable_observer)
        for m in modules:
            out.append((m(x).detach().numpy(), m.scale.numpy().copy(), m.zero_point.numpy().copy()))
    out += [tuple(v.numpy() for v in m.calculate_qparams()) for m in modules]
    return out


@pytest.mark.parity
def test_default_qat_fake_quantizers_as_pytorch(torch):
    for seed in range(8):
        for ours, theirs in zip(_fake_quantizers(dt, seed), _fake_quantizers(torch, seed), strict=True):
            for a, b in zip(ours, theirs, strict=True):
                assert a.dtype == b.dtype
                np.testing.assert_array_equal(a, b)


def test_fused_fake_quantize_keeps_sparsity_for_symmetric_weights():
    fq = aq.default_fused_wt_fake_quant()
    fq(dt.tensor([-1.0, 0.5]))
    assert fq.scale.tolist() == [np.float32(1 / 128)] and fq.zero_point.tolist() == [0]
    assert fq.calculate_qparams()[0].tolist() == [np.float32(1 / 127.5)]  # the observer's own rule
    with pytest.raises(AssertionError, match="only works with MovingAverageMinMaxObserver"):
        aq.FusedMovingAvgObsFakeQuantize(observer=aq.MinMaxObserver)
    with pytest.raises(AssertionError, match="Version number must be 0 or 1"):
        aq.get_default_qat_qconfig("x86", version=2)
