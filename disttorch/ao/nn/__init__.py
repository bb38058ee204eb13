"""``torch.ao.nn``: the quantized counterparts of ``torch.nn`` modules."""

from . import quantized

__all__ = ["quantized"]
