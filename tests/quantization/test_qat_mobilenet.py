"""Quantization-aware training as PyTorch's static-quantization tutorial does it, on a small
MobileNetV2 (ConvBNReLU blocks, inverted residuals adding through FloatFunctional,
``x.mean([2, 3])``, Linear): ``fuse_modules_qat`` -> ``get_default_qat_qconfig("x86")`` ->
``prepare_qat`` -> QAT steps -> ``disable_observer`` + ``freeze_bn_stats`` -> ``convert``.
The losses are PyTorch's, and the converted model, given PyTorch's trained QAT state, gives
PyTorch's integers bit for bit."""

import numpy as np
import pytest

import disttorch as dt

pytestmark = [
    pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor"),
    pytest.mark.filterwarnings("ignore:torch.ao.quantization is deprecated"),
    pytest.mark.filterwarnings("ignore:Please use quant_min and quant_max"),
]

_RNG = np.random.default_rng(0)
IMAGES = _RNG.standard_normal((24, 3, 8, 8)).astype(np.float32)
LABELS = _RNG.integers(0, 4, 24)


def _mobilenet(lib):
    nn, aq = lib.nn, lib.ao.quantization

    class ConvBNReLU(nn.Sequential):
        def __init__(self, cin, cout, kernel_size=3, stride=1, groups=1):
            pad = (kernel_size - 1) // 2
            conv = nn.Conv2d(cin, cout, kernel_size, stride, pad, groups=groups, bias=False)
            super().__init__(conv, nn.BatchNorm2d(cout), nn.ReLU())

    class InvertedResidual(nn.Module):
        def __init__(self, cin, cout, stride, expand):
            super().__init__()
            hidden = cin * expand
            self.use_res_connect = stride == 1 and cin == cout
            layers = [ConvBNReLU(cin, hidden, 1)] if expand != 1 else []
            layers += [
                ConvBNReLU(hidden, hidden, stride=stride, groups=hidden),
                nn.Conv2d(hidden, cout, 1, bias=False),
                nn.BatchNorm2d(cout),
            ]
            self.conv = nn.Sequential(*layers)
            self.skip_add = lib.ao.nn.quantized.FloatFunctional()

        def forward(self, x):
            return self.skip_add.add(x, self.conv(x)) if self.use_res_connect else self.conv(x)

    class MobileNetV2(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant = aq.QuantStub(), aq.DeQuantStub()
            self.features = nn.Sequential(
                ConvBNReLU(3, 8, stride=2), InvertedResidual(8, 8, 1, 1), InvertedResidual(8, 8, 1, 2)
            )
            self.classifier = nn.Sequential(nn.Linear(8, 4))

        def forward(self, x):
            x = self.features(self.quant(x)).mean([2, 3])
            return self.dequant(self.classifier(x))

        def fuse_model(self):
            for m in self.modules():
                if type(m) is ConvBNReLU:
                    aq.fuse_modules_qat(m, ["0", "1", "2"], inplace=True)
                elif type(m) is InvertedResidual:
                    for i in range(len(m.conv)):
                        if type(m.conv[i]) is nn.Conv2d:
                            aq.fuse_modules_qat(m.conv, [str(i), str(i + 1)], inplace=True)

    return MobileNetV2


def _prepared(lib):
    lib.manual_seed(0)
    model = _mobilenet(lib)()
    model.fuse_model()
    model.qconfig = lib.ao.quantization.get_default_qat_qconfig("x86")
    return lib.ao.quantization.prepare_qat(model)


def _qat(lib) -> dict:
    """The tutorial's loop, shortened: losses, the trained state, the converted model's output."""
    aq = lib.ao.quantization
    model = _prepared(lib)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    images, labels = lib.tensor(IMAGES), lib.tensor(LABELS)
    losses = []
    for _ in range(2):
        model.train()
        for i in (0, 8):
            loss = lib.nn.functional.cross_entropy(model(images[i : i + 8]), labels[i : i + 8])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        model.apply(aq.disable_observer)
        model.apply(lib.ao.nn.intrinsic.qat.freeze_bn_stats)
    model.train()  # frozen batch norms stay in eval mode
    frozen = model.features[0][0].bn.training
    quantized = aq.convert(model.eval())
    with lib.no_grad():
        out = quantized(images[16:])
    return {
        "losses": losses,
        "frozen_bn_training": frozen,
        "state": {k: v.detach().numpy().copy() for k, v in model.state_dict().items()},
        "output": out.numpy(),
        "repr": repr(model.features[1].conv[0]).replace("disttorch.", "torch."),
        "quantized_repr": repr(quantized.features[1]).replace("disttorch.", "torch."),
        "types": [m._get_name() for m in quantized.modules()],
    }


def test_qat_flow_converts_to_quantized_layers():
    got = _qat(dt)
    assert got["frozen_bn_training"] is False
    assert "ConvBnReLU2d" in got["repr"] and "FusedMovingAvgObsFakeQuantize" in got["repr"]
    assert {"QuantizedConvReLU2d", "QuantizedConv2d", "QFunctional", "QuantizedLinear"} <= set(got["types"])
    assert np.all(np.isfinite(got["losses"]))


@pytest.mark.parity
def test_losses_and_quantized_integers_as_pytorch(torch):
    ours, theirs = _qat(dt), _qat(torch)
    np.testing.assert_allclose(ours["losses"], theirs["losses"], rtol=1e-5)
    assert ours["repr"] == theirs["repr"]
    assert ours["state"].keys() == theirs["state"].keys()
    # from PyTorch's trained state (the float rounding of training aside) convert gives its integers
    model = _prepared(dt)
    model.load_state_dict({k: dt.tensor(v) for k, v in theirs["state"].items()})
    model.apply(dt.ao.quantization.disable_observer)
    model.apply(dt.ao.nn.intrinsic.qat.freeze_bn_stats)
    quantized = dt.ao.quantization.convert(model.eval())
    assert repr(quantized.features[1]).replace("disttorch.", "torch.") == theirs["quantized_repr"]
    with dt.no_grad():
        np.testing.assert_array_equal(quantized(dt.tensor(IMAGES[16:])).numpy(), theirs["output"])
