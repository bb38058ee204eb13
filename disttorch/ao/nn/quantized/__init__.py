"""``torch.ao.nn.quantized``: quantized modules (``dynamic`` holds the dynamically
quantized ones)."""

from . import dynamic
from .modules import (
    BatchNorm2d,
    Conv2d,
    DeQuantize,
    FloatFunctional,
    Linear,
    LinearPackedParams,
    QFunctional,
    Quantize,
    ReLU,
)

__all__ = [
    "BatchNorm2d",
    "dynamic",
    "Conv2d",
    "DeQuantize",
    "FloatFunctional",
    "QFunctional",
    "Linear",
    "LinearPackedParams",
    "Quantize",
    "ReLU",
]
