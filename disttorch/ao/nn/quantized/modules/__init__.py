"""Quantized modules' building blocks (PyTorch's ``torch.ao.nn.quantized.modules``)."""

from .linear import LinearPackedParams

__all__ = ["LinearPackedParams"]
