"""``torch.ao.nn.intrinsic.quantized``: fused quantized layers."""

from .linear_relu import LinearReLU

__all__ = ["LinearReLU"]
