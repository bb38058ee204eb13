"""Quantization-aware training of a small MobileNetV2, as PyTorch's tutorial "(beta) Static
Quantization with Eager Mode in PyTorch" does it (no download: random images, a random
teacher network's labels): ConvBNReLU blocks, inverted residuals whose addition goes
through FloatFunctional, ``fuse_modules_qat``, ``get_default_qat_qconfig("x86")``,
``prepare_qat``, a few epochs with the observers disabled and the batch-norm statistics
frozen late, ``convert`` after every epoch and an evaluation of the quantized model.

Runs as is under PyTorch, and under disttorch with ``python -m disttorch.as_torch``.
"""

import io

import torch
import torch.nn as nn
from torch.ao.quantization import DeQuantStub, QuantStub


class ConvBNReLU(nn.Sequential):
    def __init__(self, in_planes, out_planes, kernel_size=3, stride=1, groups=1):
        padding = (kernel_size - 1) // 2
        super().__init__(
            nn.Conv2d(in_planes, out_planes, kernel_size, stride, padding, groups=groups, bias=False),
            nn.BatchNorm2d(out_planes, momentum=0.1),
            nn.ReLU(inplace=False),
        )


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride, expand_ratio):
        super().__init__()
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvBNReLU(inp, hidden_dim, kernel_size=1))  # pointwise
        layers.extend(
            [
                ConvBNReLU(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim),  # depthwise
                nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),  # pointwise-linear
                nn.BatchNorm2d(oup, momentum=0.1),
            ]
        )
        self.conv = nn.Sequential(*layers)
        self.skip_add = torch.ao.nn.quantized.FloatFunctional()

    def forward(self, x):
        if self.use_res_connect:
            return self.skip_add.add(x, self.conv(x))
        return self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            ConvBNReLU(3, 8, stride=2),
            InvertedResidual(8, 8, 1, 1),
            InvertedResidual(8, 16, 2, 4),
            InvertedResidual(16, 16, 1, 4),
            ConvBNReLU(16, 32, kernel_size=1),
        )
        self.quant, self.dequant = QuantStub(), DeQuantStub()
        self.classifier = nn.Sequential(nn.Linear(32, num_classes))

    def forward(self, x):
        x = self.features(self.quant(x))
        x = x.mean([2, 3])
        return self.dequant(self.classifier(x))

    def fuse_model(self, is_qat=False):
        fuse_modules = (
            torch.ao.quantization.fuse_modules_qat if is_qat else torch.ao.quantization.fuse_modules
        )
        for m in self.modules():
            if type(m) is ConvBNReLU:
                fuse_modules(m, ["0", "1", "2"], inplace=True)
            if type(m) is InvertedResidual:
                for idx in range(len(m.conv)):
                    if type(m.conv[idx]) is nn.Conv2d:
                        fuse_modules(m.conv, [str(idx), str(idx + 1)], inplace=True)


def print_size_of_model(model):
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    print("Size (MB):", len(buf.getvalue()) / 1e6)


def evaluate(model, images, labels):
    with torch.no_grad():
        out = model(images)
    return out, (out.argmax(1) == labels).float().mean().item()


def main():
    torch.manual_seed(0)
    images = torch.randn(48, 3, 12, 12)
    with torch.no_grad():
        logits = MobileNetV2().eval()(images)
    labels = (logits - logits.mean(0)).argmax(1)  # a random teacher's labels
    model = MobileNetV2()
    print_size_of_model(model)
    model.fuse_model(is_qat=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    model.qconfig = torch.ao.quantization.get_default_qat_qconfig("x86")
    torch.ao.quantization.prepare_qat(model, inplace=True)
    print(model.features[1].conv[0])
    for epoch in range(3):
        model.train()
        for i in range(0, 32, 16):
            loss = nn.functional.cross_entropy(model(images[i : i + 16]), labels[i : i + 16])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(f"epoch {epoch} step {i // 16}: loss {loss.item():.4f}")
        if epoch >= 1:  # from here on, the quantization ranges and batch norm statistics stay
            model.apply(torch.ao.quantization.disable_observer)
            model.apply(torch.ao.nn.intrinsic.qat.freeze_bn_stats)
        quantized = torch.ao.quantization.convert(model.eval(), inplace=False)
        _, acc = evaluate(quantized, images[32:], labels[32:])
        print(f"epoch {epoch}: quantized accuracy {acc:.4f}")
    print(quantized)
    print_size_of_model(quantized)
    with torch.no_grad():
        q = quantized.classifier(quantized.features(quantized.quant(images[32:40])).mean([2, 3]))
    print("output scale", q.q_scale(), "zero point", q.q_zero_point())
    print("output integers", q.int_repr().tolist())


if __name__ == "__main__":
    main()
