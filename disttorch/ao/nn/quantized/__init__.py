"""``torch.ao.nn.quantized``: quantized modules (``dynamic`` holds the dynamically
quantized ones)."""

from . import dynamic
from .modules import LinearPackedParams

__all__ = ["dynamic", "LinearPackedParams"]
