"""Post-training static quantization and quantization-aware training of a small CNN, in the
style of PyTorch's tutorials "(beta) Static Quantization with Eager Mode in PyTorch" and its
QAT section (no download: random images, a random teacher network's labels).

Runs as is under PyTorch, and under disttorch with ``python -m disttorch.as_torch``.
"""

import copy
import io

import torch
import torch.nn as nn


class ConvBNReLU(nn.Sequential):
    def __init__(self, cin, cout, stride):
        super().__init__(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class Block(nn.Module):
    """A residual block: its addition goes through FloatFunctional so it can be quantized."""

    def __init__(self, channels):
        super().__init__()
        self.conv = ConvBNReLU(channels, channels, 1)
        self.skip_add = torch.ao.nn.quantized.FloatFunctional()

    def forward(self, x):
        return self.skip_add.add(x, self.conv(x))


class SmallNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.quant = torch.ao.quantization.QuantStub()
        self.features = nn.Sequential(ConvBNReLU(3, 16, 2), Block(16), ConvBNReLU(16, 32, 2))
        self.classifier = nn.Linear(32 * 4 * 4, classes)
        self.dequant = torch.ao.quantization.DeQuantStub()

    def forward(self, x):
        x = self.features(self.quant(x))
        return self.dequant(self.classifier(x.reshape(x.shape[0], -1)))

    def fuse_model(self):
        for m in self.modules():
            if type(m) is ConvBNReLU:
                torch.ao.quantization.fuse_modules(m, ["0", "1", "2"], inplace=True)


def print_size_of_model(model):
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    print("Size (MB):", len(buf.getvalue()) / 1e6)


def accuracy(model, images, labels):
    with torch.no_grad():
        return (model(images).argmax(1) == labels).float().mean().item()


def main():
    torch.manual_seed(0)
    images = torch.randn(256, 3, 16, 16)
    labels = SmallNet().eval()(images).argmax(1)  # a random teacher's labels
    model = SmallNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(3):
        for i in range(0, 256, 32):
            loss = nn.functional.cross_entropy(model(images[i : i + 32]), labels[i : i + 32])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")
    model.eval()
    print("float accuracy", round(accuracy(model, images, labels), 4))
    print_size_of_model(model)

    # post-training static quantization
    ptq = copy.deepcopy(model)
    ptq.fuse_model()
    ptq.qconfig = torch.ao.quantization.get_default_qconfig("x86")
    torch.ao.quantization.prepare(ptq, inplace=True)
    accuracy(ptq, images[:128], labels[:128])  # calibration
    torch.ao.quantization.convert(ptq, inplace=True)
    print(ptq)
    print("static quantized accuracy", round(accuracy(ptq, images, labels), 4))
    print_size_of_model(ptq)

    # quantization-aware training
    qat = copy.deepcopy(model).train()
    qat.qconfig = torch.ao.quantization.default_qat_qconfig
    torch.ao.quantization.prepare_qat(qat, inplace=True)
    opt = torch.optim.SGD(qat.parameters(), lr=0.01)
    for i in range(0, 256, 32):
        loss = nn.functional.cross_entropy(qat(images[i : i + 32]), labels[i : i + 32])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"qat loss {loss.item():.4f}")
    quantized = torch.ao.quantization.convert(qat.eval())
    print("qat quantized accuracy", round(accuracy(quantized, images, labels), 4))


if __name__ == "__main__":
    main()
