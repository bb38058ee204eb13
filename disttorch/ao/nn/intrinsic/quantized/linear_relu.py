"""``QuantizedLinearReLU``: a static quantized linear layer whose ReLU is fused into the
requantization (the output integers clamped below at the output zero point, as fbgemm's
fused ReLU does)."""

from __future__ import annotations

import numpy as np

from ....._tensor import Tensor
from .....nn.modules.module import Module
from ...quantized.modules.linear import Linear

__all__ = ["LinearReLU"]


class LinearReLU(Linear):
    """A quantized ``Linear`` with a fused ReLU (made from ``intrinsic.LinearReLU``)."""

    def forward(self, x: Tensor) -> Tensor:
        out = super().forward(x)
        return out._like(np.maximum(out._data, np.uint8(self.zero_point)))

    def _get_name(self) -> str:
        return "QuantizedLinearReLU"

    @classmethod
    def from_float(cls, mod: Module, use_precomputed_fake_quant: bool = False) -> "LinearReLU":
        """From a prepared ``intrinsic.LinearReLU`` (its Linear's weight, its output observer)
        or a trained QAT ``LinearReLU``."""
        if not hasattr(mod, "__getitem__"):  # the QAT layer: a Linear itself
            return super().from_float(mod)
        linear = mod[0]
        linear.qconfig = mod.qconfig
        linear.activation_post_process = mod.activation_post_process
        return super().from_float(linear)
