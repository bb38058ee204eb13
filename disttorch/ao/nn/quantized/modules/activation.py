"""``ReLU`` on quantized tensors: the integers clamped below at the zero point, the scale and
zero point kept (PyTorch applies ``nn.ReLU`` to quantized tensors through its quantized
backend; here ``convert`` swaps ``nn.ReLU`` for this module, which prints as ``ReLU()``)."""

from __future__ import annotations

import numpy as np

from ....._tensor import Tensor
from .....nn.modules.module import Module

__all__ = ["ReLU"]


class ReLU(Module):
    """``max(x, 0)`` of a per-tensor quantized tensor, in its own quantized form."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        if not x.is_quantized:
            raise RuntimeError("quantized ReLU expects a quantized tensor (put a QuantStub before it)")
        return x._like(np.maximum(x._data, x._data.dtype.type(x.q_zero_point())))

    def _get_name(self) -> str:
        return "ReLU"

    @classmethod
    def from_float(cls, mod: Module, use_precomputed_fake_quant: bool = False) -> "ReLU":
        return cls(getattr(mod, "inplace", False))
