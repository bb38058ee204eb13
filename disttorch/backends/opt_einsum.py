"""``torch.backends.opt_einsum``: whether the ``opt_einsum`` package is importable (PyTorch
uses it to order einsum contractions; disttorch's einsum is NumPy's, which optimises itself)."""

from __future__ import annotations

import importlib.util

__all__ = ["enabled", "is_available", "strategy"]

enabled = True
strategy = "auto"


def is_available() -> bool:
    """Whether the ``opt_einsum`` package is installed."""
    return importlib.util.find_spec("opt_einsum") is not None
