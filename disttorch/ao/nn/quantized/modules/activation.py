"""``QuantizedReLU6``: ``min(max(x, 0), 6)`` of a quantized tensor, its scale and zero point
kept (``convert`` makes it from ``nn.ReLU6``). Plain ``nn.ReLU``, ``nn.Hardtanh``, pooling
and ``flatten`` take quantized tensors themselves, as in PyTorch."""

from __future__ import annotations

from typing import Any

from ....._tensor import Tensor
from .....nn.modules.activation import ReLU
from .....nn.modules.module import Module

__all__ = ["ReLU6"]


class ReLU6(ReLU):
    """ReLU6 of a per-tensor quantized tensor, in its own quantized form."""

    def forward(self, input: Tensor) -> Tensor:
        if not input.is_quantized:
            raise RuntimeError("QuantizedReLU6 expects a quantized tensor (put a QuantStub before it)")
        return input.clamp(0.0, 6.0)

    def _get_name(self) -> str:
        return "QuantizedReLU6"

    @staticmethod
    def from_float(mod: Module, use_precomputed_fake_quant: bool = False) -> Any:
        return ReLU6(getattr(mod, "inplace", False))
