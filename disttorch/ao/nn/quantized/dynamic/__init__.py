"""``torch.ao.nn.quantized.dynamic``: modules whose weights are quantized ahead of time and
whose activations are quantized at every call (what ``quantize_dynamic`` swaps in)."""

from .modules import GRU, LSTM, Linear

__all__ = ["Linear", "LSTM", "GRU"]
