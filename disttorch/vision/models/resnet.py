"""``torchvision.models.resnet``: ResNet (arXiv:1512.03385) with torchvision's layout (its
state dicts load here) and initialisation (the same seed gives the same parameters:
Kaiming-normal convolutions drawn in module order, norms at 1 and 0, the classifier's
Linear default). ``weights`` load from the hub cache (see ``_api``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import disttorch as torch
from disttorch import nn
from disttorch._tensor import Tensor

from ._api import WeightsEnum, _weights, build

__all__ = [
    "BasicBlock",
    "Bottleneck",
    "ResNet",
    "ResNet101_Weights",
    "ResNet152_Weights",
    "ResNet18_Weights",
    "ResNet34_Weights",
    "ResNet50_Weights",
    "resnet101",
    "resnet152",
    "resnet18",
    "resnet34",
    "resnet50",
]


def conv3x3(
    in_planes: int, out_planes: int, stride: int = 1, groups: int = 1, dilation: int = 1
) -> nn.Conv2d:
    """3x3 convolution with padding (no bias)."""
    return nn.Conv2d(
        in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation, groups=groups, bias=False,
        dilation=dilation,
    )  # fmt: skip


def conv1x1(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    """1x1 convolution (no bias)."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with a residual connection (ResNet-18/34)."""

    expansion: int = 1

    def __init__(
        self,
        inplanes: int,
        planes: int,
        stride: int = 1,
        downsample: nn.Module | None = None,
        groups: int = 1,
        base_width: int = 64,
        dilation: int = 1,
        norm_layer: Callable[..., nn.Module] | None = None,
    ) -> None:
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        out = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        out += x if self.downsample is None else self.downsample(x)
        return self.relu(out)


class Bottleneck(nn.Module):
    """1x1, 3x3 (strided, as ResNet v1.5) and 1x1 convolutions with a residual connection."""

    expansion: int = 4

    def __init__(
        self,
        inplanes: int,
        planes: int,
        stride: int = 1,
        downsample: nn.Module | None = None,
        groups: int = 1,
        base_width: int = 64,
        dilation: int = 1,
        norm_layer: Callable[..., nn.Module] | None = None,
    ) -> None:
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out += x if self.downsample is None else self.downsample(x)
        return self.relu(out)


class ResNet(nn.Module):
    """A 7x7 stem, four stages of ``layers[i]`` blocks (64, 128, 256, 512 planes), global
    average pooling and a Linear classifier of ``num_classes``."""

    def __init__(
        self,
        block: type[BasicBlock | Bottleneck],
        layers: list[int],
        num_classes: int = 1000,
        zero_init_residual: bool = False,
        groups: int = 1,
        width_per_group: int = 64,
        replace_stride_with_dilation: list[bool] | None = None,
        norm_layer: Callable[..., nn.Module] | None = None,
    ) -> None:
        super().__init__()
        self._norm_layer = norm_layer = norm_layer or nn.BatchNorm2d
        self.inplanes, self.dilation = 64, 1
        dilate = replace_stride_with_dilation or [False, False, False]
        if len(dilate) != 3:
            raise ValueError(
                f"replace_stride_with_dilation should be None or a 3-element tuple, got {replace_stride_with_dilation}"
            )
        self.groups, self.base_width = groups, width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2, dilate=dilate[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2, dilate=dilate[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2, dilate=dilate[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:  # each residual branch starts as the identity
            for m in self.modules():
                last = m.bn3 if isinstance(m, Bottleneck) else m.bn2 if isinstance(m, BasicBlock) else None
                if last is not None and last.weight is not None:
                    nn.init.constant_(last.weight, 0)

    def _make_layer(
        self,
        block: type[BasicBlock | Bottleneck],
        planes: int,
        blocks: int,
        stride: int = 1,
        dilate: bool = False,
    ) -> nn.Sequential:
        norm_layer = self._norm_layer
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * block.expansion, stride), norm_layer(planes * block.expansion)
            )
        layers = [
            block(
                self.inplanes,
                planes,
                stride,
                downsample,
                self.groups,
                self.base_width,
                previous_dilation,
                norm_layer,
            )
        ]
        self.inplanes = planes * block.expansion
        layers += [
            block(
                self.inplanes, planes, groups=self.groups, base_width=self.base_width, dilation=self.dilation,
                norm_layer=norm_layer,
            )
            for _ in range(1, blocks)
        ]  # fmt: skip
        return nn.Sequential(*layers)

    def _forward_impl(self, x: Tensor) -> Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))

    def forward(self, x: Tensor) -> Tensor:
        return self._forward_impl(x)


class ResNet18_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("resnet18-f37072fd.pth", 11689512)
    DEFAULT = IMAGENET1K_V1


class ResNet34_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("resnet34-b627a593.pth", 21797672)
    DEFAULT = IMAGENET1K_V1


class ResNet50_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("resnet50-0676ba61.pth", 25557032)
    IMAGENET1K_V2 = _weights("resnet50-11ad3fa6.pth", 25557032)
    DEFAULT = IMAGENET1K_V2


class ResNet101_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("resnet101-63fe2227.pth", 44549160)
    IMAGENET1K_V2 = _weights("resnet101-cd907fc2.pth", 44549160)
    DEFAULT = IMAGENET1K_V2


class ResNet152_Weights(WeightsEnum):
    IMAGENET1K_V1 = _weights("resnet152-394f9c45.pth", 60192808)
    IMAGENET1K_V2 = _weights("resnet152-f82ba261.pth", 60192808)
    DEFAULT = IMAGENET1K_V2


def _builder(block: type[BasicBlock | Bottleneck], layers: list[int], enum: type[WeightsEnum], name: str):
    def builder(*, weights: Any = None, progress: bool = True, **kwargs: Any) -> ResNet:
        return build(lambda **kw: ResNet(block, layers, **kw), enum, weights, kwargs)

    builder.__name__ = builder.__qualname__ = name
    builder.__doc__ = f"ResNet-{name[6:]} (``weights``: {enum.__name__}, loaded from the hub cache)."
    return builder


resnet18 = _builder(BasicBlock, [2, 2, 2, 2], ResNet18_Weights, "resnet18")
resnet34 = _builder(BasicBlock, [3, 4, 6, 3], ResNet34_Weights, "resnet34")
resnet50 = _builder(Bottleneck, [3, 4, 6, 3], ResNet50_Weights, "resnet50")
resnet101 = _builder(Bottleneck, [3, 4, 23, 3], ResNet101_Weights, "resnet101")
resnet152 = _builder(Bottleneck, [3, 8, 36, 3], ResNet152_Weights, "resnet152")
