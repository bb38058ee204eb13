"""Fused reductions: sums that BLAS does in one pass where NumPy's own loop is slow.
Measured by ``benchmarks/kernels.py``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["column_sum"]


def column_sum(a: np.ndarray) -> np.ndarray:
    """Sum over the rows of ``a`` ``(R, D)``: a vector-matrix product (BLAS, one read of
    ``a``), several times faster than ``a.sum(0)``, whose NumPy loop strides across rows."""
    return np.ones(a.shape[0], dtype=a.dtype) @ a


# ---------------------------------------------------------------------- sliding windows
