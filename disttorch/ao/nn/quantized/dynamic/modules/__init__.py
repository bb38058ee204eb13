"""The dynamically quantized modules: ``Linear``, ``LSTM``, ``GRU``."""

from .linear import Linear

__all__ = ["Linear"]
