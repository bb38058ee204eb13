"""``torch.ao.nn.intrinsic``: fused float modules (``LinearReLU``, ``ConvReLU2d``...) and, in
``quantized``, their quantized forms."""

from . import quantized
from .fused import BNReLU2d, ConvReLU1d, ConvReLU2d, ConvReLU3d, LinearReLU

__all__ = ["BNReLU2d", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearReLU", "quantized"]
