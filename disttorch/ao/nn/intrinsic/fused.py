"""Fused float modules (``torch.ao.nn.intrinsic``): a layer and the activation after it held
as one ``Sequential``, so that quantization treats them as one op (``fuse_modules`` makes
them; ``convert`` turns them into fused quantized layers)."""

from __future__ import annotations

from ....nn.modules.activation import ReLU
from ....nn.modules.batchnorm import BatchNorm2d
from ....nn.modules.container import Sequential
from ....nn.modules.conv import Conv1d, Conv2d, Conv3d
from ....nn.modules.linear import Linear
from ....nn.modules.module import Module

__all__ = ["BNReLU2d", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearReLU"]


class _FusedModule(Sequential):
    """Two float modules run one after the other; each subclass checks their types."""

    _parts: tuple = ()

    def __init__(self, first: Module, relu: Module) -> None:
        if type(first) is not self._parts[0] or type(relu) is not ReLU:
            raise AssertionError(
                f"Incorrect types for input modules{type(first)}{type(relu)}: {type(self).__name__} fuses "
                f"{self._parts[0].__name__} and ReLU"
            )
        super().__init__(first, relu)


class ConvReLU1d(_FusedModule):
    """Conv1d followed by ReLU."""

    _parts = (Conv1d,)


class ConvReLU2d(_FusedModule):
    """Conv2d followed by ReLU."""

    _parts = (Conv2d,)


class ConvReLU3d(_FusedModule):
    """Conv3d followed by ReLU."""

    _parts = (Conv3d,)


class LinearReLU(_FusedModule):
    """Linear followed by ReLU."""

    _parts = (Linear,)


class BNReLU2d(_FusedModule):
    """BatchNorm2d followed by ReLU."""

    _parts = (BatchNorm2d,)
