"""``torch.ao.nn.intrinsic.quantized``: fused quantized layers."""

from .conv_relu import ConvReLU2d
from .linear_relu import LinearReLU

__all__ = ["ConvReLU2d", "LinearReLU"]
