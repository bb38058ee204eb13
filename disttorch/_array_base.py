"""The array that owns the memory a NumPy view lies in (a tensor's storage is that memory)."""

from __future__ import annotations

import numpy as np

__all__ = ["owning_array"]


def owning_array(arr: np.ndarray) -> np.ndarray:
    """The array whose memory ``arr`` views (``arr`` itself when it owns its memory, or when
    that belongs to another object than an array, such as a shared segment: its ``base``).
    The chain goes through the interface holders ``np.lib.stride_tricks.as_strided`` puts
    between a view and its base (expand, unfold, loaded views)."""
    while True:
        base = arr.base
        if not isinstance(base, np.ndarray) and hasattr(base, "__array_interface__"):
            base = getattr(base, "base", None)
        if not isinstance(base, np.ndarray):
            return arr
        arr = base
