"""Fused QAT modules (``torch.ao.nn.intrinsic.qat``): ``ConvReLU2d`` and ``LinearReLU`` (QAT
layers with a ReLU after them) and ``ConvBn2d`` / ``ConvBnReLU2d``, a convolution whose
batch norm stays live during training while the weight is fake-quantized as it will be once
the norm is folded in (PyTorch's approximate method):

``bn(conv(x, fake_quant(w * gamma / running_std)) / (gamma / running_std) + b)``

``freeze_bn_stats`` stops the batch norm's statistics (it then normalises with the running
ones); ``convert`` folds the norm into the weight and bias (``nn.utils.fuse_conv_bn_weights``)
and quantizes it."""

from __future__ import annotations

import math
from typing import Any

from ....._creation import empty, zeros
from ....._tensor import Tensor
from .....nn import init
from .....nn.functional.activation import relu
from .....nn.modules.batchnorm import BatchNorm2d
from .....nn.modules.conv import Conv2d
from .....nn.modules.module import Module
from .....nn.parameter import Parameter
from .....nn.utils.fusion import fuse_conv_bn_weights
from ... import qat as nnqat
from .. import fused as nni

__all__ = ["ConvBn2d", "ConvBnReLU2d", "ConvReLU2d", "LinearReLU", "freeze_bn_stats", "update_bn_stats"]


class ConvReLU2d(nnqat.Conv2d):
    """QAT ``Conv2d`` followed by ReLU (from ``intrinsic.ConvReLU2d``)."""

    _FLOAT_MODULE = nni.ConvReLU2d

    def forward(self, input: Tensor) -> Tensor:
        return relu(super().forward(input))


class LinearReLU(nnqat.Linear):
    """QAT ``Linear`` followed by ReLU (from ``intrinsic.LinearReLU``)."""

    _FLOAT_MODULE = nni.LinearReLU

    def forward(self, input: Tensor) -> Tensor:
        return relu(super().forward(input))


class ConvBn2d(Conv2d):
    """Conv2d and BatchNorm2d for quantization-aware training (from ``intrinsic.ConvBn2d``):
    the conv's weight scaled by the norm's ``gamma / running_std`` is fake-quantized."""

    _FLOAT_MODULE = nni.ConvBn2d

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool | None = None,
        padding_mode: str = "zeros",
        eps: float = 1e-05,
        momentum: float = 0.1,
        freeze_bn: bool = False,
        qconfig: Any = None,
    ) -> None:
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation, groups, False, padding_mode
        )
        if not qconfig:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.freeze_bn = freeze_bn if self.training else True
        self.bn = BatchNorm2d(out_channels, eps, momentum, True, True)
        self.weight_fake_quant = qconfig.weight()
        if bias:
            self.bias = Parameter(empty(out_channels))
        self.reset_bn_parameters()
        if self.training and not freeze_bn:
            self.update_bn_stats()
        else:
            self.freeze_bn_stats()

    def reset_running_stats(self) -> None:
        self.bn.reset_running_stats()

    def reset_bn_parameters(self) -> None:
        """PyTorch's initialisation: running stats reset, ``gamma ~ U(0, 1)``, ``beta = 0``,
        the conv bias from ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` (the same random draws)."""
        self.bn.reset_running_stats()
        init.uniform_(self.bn.weight)
        init.zeros_(self.bn.bias)
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(self.bias, -bound, bound)

    def update_bn_stats(self) -> ConvBn2d:
        """Let the batch norm use and update batch statistics again (in train mode)."""
        self.freeze_bn = False
        self.bn.training = True
        return self

    def freeze_bn_stats(self) -> ConvBn2d:
        """Normalise with the running statistics and stop updating them."""
        self.freeze_bn = True
        self.bn.training = False
        return self

    def train(self, mode: bool = True) -> ConvBn2d:
        """Train mode for this module, and for the batch norm unless its statistics are frozen."""
        self.training = mode
        if not self.freeze_bn:
            for module in self.children():
                module.train(mode)
        return self

    def _forward(self, input: Tensor) -> Tensor:
        running_std = (self.bn.running_var + self.bn.eps).sqrt()
        scale_factor = self.bn.weight / running_std
        scaled_weight = self.weight_fake_quant(self.weight * scale_factor.reshape(-1, 1, 1, 1))
        zero_bias = zeros(self.out_channels, dtype=input.dtype)
        conv = self._conv(
            input, scaled_weight, zero_bias, self.stride, self.padding, self.dilation, self.groups
        )
        conv_orig = conv / scale_factor.reshape(1, -1, 1, 1)
        if self.bias is not None:
            conv_orig = conv_orig + self.bias.reshape(1, -1, 1, 1)
        return self.bn(conv_orig)

    def forward(self, input: Tensor) -> Tensor:
        return self._forward(input)

    def fold_bn(self) -> None:
        """Fold the batch norm's running statistics into ``weight`` and ``bias`` (what
        ``convert`` quantizes)."""
        bn = self.bn
        self.weight, self.bias = fuse_conv_bn_weights(
            self.weight, self.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
        )

    @classmethod
    def from_float(cls, mod: Module, use_precomputed_fake_quant: bool = False) -> ConvBn2d:
        """The QAT form of a fused ``intrinsic.ConvBn2d`` (sharing its parameters and buffers)."""
        if type(mod) is not cls._FLOAT_MODULE:
            raise AssertionError(f"qat.{cls.__name__}.from_float only works for {cls._FLOAT_MODULE.__name__}")
        if not getattr(mod, "qconfig", None):
            raise AssertionError("Input float module must have a valid qconfig")
        conv, bn = mod[0], mod[1]
        if conv.padding_mode != "zeros":
            raise NotImplementedError("QAT ConvBn2d supports padding_mode='zeros'")
        qat = cls(
            conv.in_channels,
            conv.out_channels,
            conv.kernel_size,
            conv.stride,
            conv.padding,
            conv.dilation,
            conv.groups,
            conv.bias is not None,
            conv.padding_mode,
            bn.eps,
            bn.momentum,
            False,
            mod.qconfig,
        )
        qat.weight, qat.bias = conv.weight, conv.bias
        qat.bn.weight, qat.bn.bias = bn.weight, bn.bias
        qat.bn.running_mean, qat.bn.running_var = bn.running_mean, bn.running_var
        qat.bn.num_batches_tracked = bn.num_batches_tracked
        return qat


class ConvBnReLU2d(ConvBn2d):
    """``ConvBn2d`` followed by ReLU (from ``intrinsic.ConvBnReLU2d``)."""

    _FLOAT_MODULE = nni.ConvBnReLU2d

    def forward(self, input: Tensor) -> Tensor:
        return relu(self._forward(input))


def update_bn_stats(mod: Module) -> None:
    """``model.apply(update_bn_stats)``: batch norms of QAT conv-bn modules learn statistics again."""
    if isinstance(mod, ConvBn2d):
        mod.update_bn_stats()


def freeze_bn_stats(mod: Module) -> None:
    """``model.apply(freeze_bn_stats)``: batch norms of QAT conv-bn modules use their running
    statistics and stop updating them."""
    if isinstance(mod, ConvBn2d):
        mod.freeze_bn_stats()
