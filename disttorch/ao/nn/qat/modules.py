"""QAT ``Linear`` and ``Conv2d``: the float layers with their weight passed through
``weight_fake_quant`` (``qconfig.weight()``) on every forward. ``from_float`` takes the
float layer (or, for the fused QAT subclasses, the fused float module holding it) and shares
its parameters."""

from __future__ import annotations

from typing import Any

from ....nn.functional.linear import linear as linear_fn
from ....nn.modules import conv, linear
from ....nn.modules.container import Sequential
from ....nn.modules.module import Module

__all__ = ["Linear", "Conv2d"]


def _float_layer(cls: type, mod: Module) -> Module:
    """The float layer ``cls.from_float`` copies: ``mod``, or the first module of a fused one."""
    if type(mod) is not cls._FLOAT_MODULE:
        raise AssertionError(
            f"qat.{cls.__name__}.from_float only works for {cls._FLOAT_MODULE.__name__}, got {type(mod).__name__}"
        )
    if getattr(mod, "qconfig", None) is None:
        raise AssertionError("Input float module must have a valid qconfig")
    return mod[0] if isinstance(mod, Sequential) else mod  # a fused module holds the layer first


def _adopt(qat: Module, mod: Module) -> Module:
    """``qat`` takes ``mod``'s parameters (the same objects)."""
    qat.weight, qat.bias = mod.weight, mod.bias
    return qat


class Linear(linear.Linear):
    """``nn.Linear`` whose weight is fake-quantized by ``weight_fake_quant``."""

    _FLOAT_MODULE = linear.Linear

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, qconfig: Any = None, **kwargs: Any
    ) -> None:
        super().__init__(in_features, out_features, bias, **kwargs)
        if qconfig is None:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input: Any) -> Any:
        return linear_fn(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod: Module, use_precomputed_fake_quant: bool = False) -> "Linear":
        """The QAT form of a float ``nn.Linear`` with a ``qconfig`` (sharing its parameters)."""
        layer = _float_layer(cls, mod)
        return _adopt(
            cls(layer.in_features, layer.out_features, layer.bias is not None, qconfig=mod.qconfig), layer
        )

    def to_float(self) -> Module:
        """The plain ``nn.Linear`` with these parameters."""
        out = linear.Linear(self.in_features, self.out_features, self.bias is not None)
        out.weight, out.bias = self.weight, self.bias
        return out


class Conv2d(conv.Conv2d):
    """``nn.Conv2d`` whose weight is fake-quantized by ``weight_fake_quant``."""

    _FLOAT_MODULE = conv.Conv2d

    def __init__(self, *args: Any, qconfig: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if qconfig is None:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input: Any) -> Any:
        weight = self.weight_fake_quant(self.weight)
        return self._conv(input, weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    @classmethod
    def from_float(cls, mod: Module, use_precomputed_fake_quant: bool = False) -> "Conv2d":
        """The QAT form of a float ``nn.Conv2d`` with a ``qconfig`` (sharing its parameters)."""
        conv = _float_layer(cls, mod)
        if conv.padding_mode != "zeros":
            raise NotImplementedError("qat.Conv2d supports padding_mode='zeros'")
        qat = cls(
            conv.in_channels,
            conv.out_channels,
            conv.kernel_size,
            stride=conv.stride,
            padding=conv.padding,
            dilation=conv.dilation,
            groups=conv.groups,
            bias=conv.bias is not None,
            padding_mode=conv.padding_mode,
            qconfig=mod.qconfig,
        )
        return _adopt(qat, conv)
