"""``torch.ao.nn.quantized``: quantized modules (``dynamic`` holds the dynamically
quantized ones)."""

from . import dynamic
from .modules import DeQuantize, Linear, LinearPackedParams, Quantize, ReLU

__all__ = ["dynamic", "DeQuantize", "Linear", "LinearPackedParams", "Quantize", "ReLU"]
