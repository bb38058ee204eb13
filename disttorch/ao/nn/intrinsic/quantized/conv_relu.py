"""``QuantizedConvReLU2d``: a quantized Conv2d with its ReLU fused into the requantization
(the output integers clamped below at the output zero point)."""

from __future__ import annotations

import numpy as np

from ...quantized.modules.conv import Conv2d

__all__ = ["ConvReLU2d"]


class ConvReLU2d(Conv2d):
    """A quantized ``Conv2d`` with a fused ReLU (made from ``intrinsic.ConvReLU2d``)."""

    def _post(self, out: np.ndarray) -> np.ndarray:
        return np.maximum(out, np.uint8(self.zero_point))

    def _get_name(self) -> str:
        return "QuantizedConvReLU2d"
