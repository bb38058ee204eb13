"""The dynamically quantized modules: ``Linear``, ``LSTM``, ``GRU``."""

from .linear import Linear
from .rnn import GRU, LSTM

__all__ = ["Linear", "LSTM", "GRU"]
