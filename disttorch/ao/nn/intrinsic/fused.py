"""Fused float modules (``torch.ao.nn.intrinsic``): a run of layers (conv + batch norm +
ReLU, linear + ReLU, ...) held as one ``Sequential``, so that quantization treats them as
one op (``fuse_modules`` / ``fuse_modules_qat`` make them; ``prepare_qat`` and ``convert``
turn them into QAT and quantized layers)."""

from __future__ import annotations

from ....nn.modules.activation import ReLU
from ....nn.modules.batchnorm import BatchNorm2d
from ....nn.modules.container import Sequential
from ....nn.modules.conv import Conv1d, Conv2d, Conv3d
from ....nn.modules.linear import Linear
from ....nn.modules.module import Module

__all__ = [
    "BNReLU2d",
    "ConvBn2d",
    "ConvBnReLU2d",
    "ConvReLU1d",
    "ConvReLU2d",
    "ConvReLU3d",
    "LinearReLU",
]


class _FusedModule(Sequential):
    """Float modules run one after the other; each subclass names their types."""

    _parts: tuple = ()

    def __init__(self, *modules: Module) -> None:
        if tuple(type(m) for m in modules) != self._parts:
            got = "".join(str(type(m)) for m in modules)
            names = " and ".join(p.__name__ for p in self._parts)
            raise AssertionError(
                f"Incorrect types for input modules{got}: {type(self).__name__} fuses {names}"
            )
        super().__init__(*modules)


class ConvReLU1d(_FusedModule):
    """Conv1d followed by ReLU."""

    _parts = (Conv1d, ReLU)


class ConvReLU2d(_FusedModule):
    """Conv2d followed by ReLU."""

    _parts = (Conv2d, ReLU)


class ConvReLU3d(_FusedModule):
    """Conv3d followed by ReLU."""

    _parts = (Conv3d, ReLU)


class ConvBn2d(_FusedModule):
    """Conv2d followed by BatchNorm2d, for quantization-aware training (``fuse_modules_qat``)."""

    _parts = (Conv2d, BatchNorm2d)


class ConvBnReLU2d(_FusedModule):
    """Conv2d, BatchNorm2d and ReLU, for quantization-aware training."""

    _parts = (Conv2d, BatchNorm2d, ReLU)


class LinearReLU(_FusedModule):
    """Linear followed by ReLU."""

    _parts = (Linear, ReLU)


class BNReLU2d(_FusedModule):
    """BatchNorm2d followed by ReLU."""

    _parts = (BatchNorm2d, ReLU)
