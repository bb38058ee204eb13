"""Which quantized module replaces which float module."""

from __future__ import annotations

from ...nn.modules.linear import Linear
from ...nn.modules.rnn import GRU, LSTM
from ..nn.quantized import dynamic as nnqd

__all__ = ["DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS", "get_default_dynamic_quant_module_mappings"]

#: float module class -> its dynamically quantized class (``quantize_dynamic``'s default)
DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS: dict = {Linear: nnqd.Linear, LSTM: nnqd.LSTM, GRU: nnqd.GRU}


def get_default_dynamic_quant_module_mappings() -> dict:
    """A copy of the default float -> dynamically quantized module mapping."""
    return dict(DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS)
