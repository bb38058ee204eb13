"""``torch.ao.nn.intrinsic``: fused float modules (``LinearReLU``, ``ConvReLU2d``,
``ConvBn2d``...); in ``qat`` their quantization-aware-training forms, in ``quantized`` their
quantized forms."""

from . import qat, quantized
from .fused import BNReLU2d, ConvBn2d, ConvBnReLU2d, ConvReLU1d, ConvReLU2d, ConvReLU3d, LinearReLU

__all__ = [
    "BNReLU2d",
    "ConvBn2d",
    "ConvBnReLU2d",
    "ConvReLU1d",
    "ConvReLU2d",
    "ConvReLU3d",
    "LinearReLU",
    "qat",
    "quantized",
]
