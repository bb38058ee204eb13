"""``torchvision.models.vgg``: VGG 11/13/16/19 (arXiv:1409.1556), with batch norm or without,
in torchvision's layout and initialisation (the same seed gives the same parameters)."""

from __future__ import annotations

from typing import Any

import disttorch as torch
from disttorch import nn
from disttorch._tensor import Tensor

from ._api import WeightsEnum, _weights, build

__all__ = [
    "VGG",
    "VGG11_BN_Weights",
    "VGG11_Weights",
    "VGG13_BN_Weights",
    "VGG13_Weights",
    "VGG16_BN_Weights",
    "VGG16_Weights",
    "VGG19_BN_Weights",
    "VGG19_Weights",
    "vgg11",
    "vgg11_bn",
    "vgg13",
    "vgg13_bn",
    "vgg16",
    "vgg16_bn",
    "vgg19",
    "vgg19_bn",
]

#: the convolution widths of each configuration ("M": 2x2 max pooling)
cfgs: dict[str, list[str | int]] = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [
        64,
        64,
        "M",
        128,
        128,
        "M",
        256,
        256,
        256,
        256,
        "M",
        512,
        512,
        512,
        512,
        "M",
        512,
        512,
        512,
        512,
        "M",
    ],
}


class VGG(nn.Module):
    """``features``, 7x7 adaptive average pooling and a three-layer classifier with dropout."""

    def __init__(
        self, features: nn.Module, num_classes: int = 1000, init_weights: bool = True, dropout: float = 0.5
    ) -> None:
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(4096, 4096),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes),
        )
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


def make_layers(cfg: list[str | int], batch_norm: bool = False) -> nn.Sequential:
    """3x3 convolutions (each with batch norm if asked, then ReLU) and max pooling, per ``cfg``."""
    layers: list[nn.Module] = []
    channels = 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            continue
        layers.append(nn.Conv2d(channels, v, kernel_size=3, padding=1))
        layers += [nn.BatchNorm2d(v), nn.ReLU(inplace=True)] if batch_norm else [nn.ReLU(inplace=True)]
        channels = v
    return nn.Sequential(*layers)


def _vgg(cfg: str, batch_norm: bool, enum: type[WeightsEnum], weights: Any, kwargs: dict) -> VGG:
    if weights is not None or kwargs.get("pretrained"):
        kwargs["init_weights"] = False  # the checkpoint overwrites every parameter
    return build(lambda **kw: VGG(make_layers(cfgs[cfg], batch_norm=batch_norm), **kw), enum, weights, kwargs)


class VGG11_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("vgg11-8a719046.pth", 132863336)
    DEFAULT = IMAGENET1K_V1


class VGG11_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("vgg11_bn-6002323d.pth", 132868840)
    DEFAULT = IMAGENET1K_V1


class VGG13_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("vgg13-19584684.pth", 133047848)
    DEFAULT = IMAGENET1K_V1


class VGG13_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("vgg13_bn-abd245e5.pth", 133053736)
    DEFAULT = IMAGENET1K_V1


class VGG16_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("vgg16-397923af.pth", 138357544)
    IMAGENET1K_FEATURES = _weights("vgg16_features-amdegroot-88682ab5.pth", 138357544, None)
    DEFAULT = IMAGENET1K_V1


class VGG16_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("vgg16_bn-6c64b313.pth", 138365992)
    DEFAULT = IMAGENET1K_V1


class VGG19_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("vgg19-dcbb9e9d.pth", 143667240)
    DEFAULT = IMAGENET1K_V1


class VGG19_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("vgg19_bn-c79401a0.pth", 143678248)
    DEFAULT = IMAGENET1K_V1


def _builder(cfg: str, batch_norm: bool, enum: type[WeightsEnum], name: str):
    def builder(*, weights: Any = None, progress: bool = True, **kwargs: Any) -> VGG:
        return _vgg(cfg, batch_norm, enum, weights, kwargs)

    builder.__name__ = builder.__qualname__ = name
    builder.__doc__ = (
        f"VGG-{name[3:5]}{' with batch norm' if batch_norm else ''} (``weights``: {enum.__name__})."
    )
    return builder


vgg11 = _builder("A", False, VGG11_Weights, "vgg11")
vgg11_bn = _builder("A", True, VGG11_BN_Weights, "vgg11_bn")
vgg13 = _builder("B", False, VGG13_Weights, "vgg13")
vgg13_bn = _builder("B", True, VGG13_BN_Weights, "vgg13_bn")
vgg16 = _builder("D", False, VGG16_Weights, "vgg16")
vgg16_bn = _builder("D", True, VGG16_BN_Weights, "vgg16_bn")
vgg19 = _builder("E", False, VGG19_Weights, "vgg19")
vgg19_bn = _builder("E", True, VGG19_BN_Weights, "vgg19_bn")
