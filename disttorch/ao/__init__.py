"""``torch.ao`` ("architecture optimization"): quantization (``ao.quantization``) and the
quantized modules it makes (``ao.nn.quantized``)."""

from . import nn, quantization

__all__ = ["nn", "quantization"]
