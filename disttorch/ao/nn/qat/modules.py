"""QAT ``Linear`` and ``Conv2d``: the float layers with their weight passed through
``weight_fake_quant`` (``qconfig.weight()``) on every forward."""

from __future__ import annotations

from typing import Any

from ....nn.functional.linear import linear as linear_fn
from ....nn.modules import conv, linear
from ....nn.modules.module import Module

__all__ = ["Linear", "Conv2d"]


def _adopt(qat: Module, mod: Module) -> Module:
    """``qat`` takes ``mod``'s parameters (the same objects) and qconfig."""
    qat.weight, qat.bias = mod.weight, mod.bias
    qat.qconfig = mod.qconfig
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
        if type(mod) is not cls._FLOAT_MODULE:
            raise AssertionError(f"qat.Linear.from_float only works for {cls._FLOAT_MODULE.__name__}")
        if getattr(mod, "qconfig", None) is None:
            raise AssertionError("Input float module must have a valid qconfig")
        return _adopt(cls(mod.in_features, mod.out_features, mod.bias is not None, qconfig=mod.qconfig), mod)

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
        if type(mod) is not cls._FLOAT_MODULE:
            raise AssertionError(f"qat.Conv2d.from_float only works for {cls._FLOAT_MODULE.__name__}")
        if getattr(mod, "qconfig", None) is None:
            raise AssertionError("Input float module must have a valid qconfig")
        if mod.padding_mode != "zeros":
            raise NotImplementedError("qat.Conv2d supports padding_mode='zeros'")
        qat = cls(
            mod.in_channels,
            mod.out_channels,
            mod.kernel_size,
            stride=mod.stride,
            padding=mod.padding,
            dilation=mod.dilation,
            groups=mod.groups,
            bias=mod.bias is not None,
            padding_mode=mod.padding_mode,
            qconfig=mod.qconfig,
        )
        return _adopt(qat, mod)
