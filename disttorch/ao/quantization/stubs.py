"""``QuantStub`` and ``DeQuantStub``: where a model's quantized region begins and ends.
Before ``convert`` they pass tensors through (the ``QuantStub``'s observer watches them);
``convert`` turns them into ``Quantize`` and ``DeQuantize``."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ...nn.modules.module import Module

__all__ = ["QuantStub", "DeQuantStub"]


class QuantStub(Module):
    """Marks where float tensors become quantized (an identity until ``convert``)."""

    def __init__(self, qconfig: Any = None) -> None:
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x: Tensor) -> Tensor:
        return x


class DeQuantStub(Module):
    """Marks where quantized tensors become float again (an identity until ``convert``)."""

    def __init__(self, qconfig: Any = None) -> None:
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x: Tensor) -> Tensor:
        return x
