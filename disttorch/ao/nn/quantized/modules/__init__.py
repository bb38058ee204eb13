"""Quantized modules (PyTorch's ``torch.ao.nn.quantized.modules``): static ``Linear``,
``ReLU``, ``Quantize``/``DeQuantize``, and the packed weights the linear layers share."""

from .activation import ReLU
from .linear import Linear, LinearPackedParams
from .quantize import DeQuantize, Quantize

__all__ = ["DeQuantize", "Linear", "LinearPackedParams", "Quantize", "ReLU"]
