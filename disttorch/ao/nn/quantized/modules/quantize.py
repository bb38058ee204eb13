"""``Quantize`` and ``DeQuantize``: the converted forms of ``QuantStub`` and ``DeQuantStub``."""

from __future__ import annotations

from typing import Any

from ....._creation import tensor
from ....._quantize import quantize_per_tensor
from ....._tensor import Tensor
from .....nn.modules.module import Module

__all__ = ["Quantize", "DeQuantize"]


class Quantize(Module):
    """Quantizes its float input per tensor with a fixed ``scale`` and ``zero_point``."""

    def __init__(self, scale: float, zero_point: int, dtype: Any) -> None:
        super().__init__()
        self.register_buffer("scale", tensor([float(scale)]))
        self.register_buffer("zero_point", tensor([int(zero_point)]))
        self.dtype = dtype

    def forward(self, x: Tensor) -> Tensor:
        return quantize_per_tensor(x, float(self.scale.item()), int(self.zero_point.item()), self.dtype)

    @staticmethod
    def from_float(mod: Module, use_precomputed_fake_quant: bool = False) -> "Quantize":
        """From a prepared ``QuantStub``: the qparams its observer chose."""
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return Quantize(scale.item(), zero_point.item(), mod.activation_post_process.dtype)

    def extra_repr(self) -> str:
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"


class DeQuantize(Module):
    """Dequantizes its quantized input to float32."""

    def forward(self, x: Tensor) -> Tensor:
        return x.dequantize()

    @staticmethod
    def from_float(mod: Module, use_precomputed_fake_quant: bool = False) -> "DeQuantize":
        return DeQuantize()
