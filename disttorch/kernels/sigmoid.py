"""``sigmoid`` of an array and its gradient, rounded as PyTorch's CPU kernels round them.

Float32 with numba takes PyTorch's vectorised kernel's steps (``1 / (1 + exp(-x))`` with
SLEEF's ``expf`` on whole 32-element blocks of each inner loop, the C library's after them,
see ``kernels/vec_exp.py``); other dtypes, and float32 without numba, compute
``exp(-|x|)`` (never overflowing) in NumPy. The gradient from the output ``y`` is
``g * (1 - y) * y``, multiplied in that order as PyTorch's ``sigmoid_backward``.
"""

from __future__ import annotations

import numpy as np

from .vec_exp import one_plus_exp_neg

__all__ = ["sigmoid", "sigmoid_grad"]


def sigmoid(x: np.ndarray, rows: bool = False) -> np.ndarray:
    """``1 / (1 + exp(-x))`` in a fresh array of ``x``'s dtype, without overflow warnings.
    ``rows``: ``x`` is C-contiguous 2-D and each row one of PyTorch's inner loops (the rows
    of tensors it walks row by row, gathered)."""
    if x.dtype.kind == "c":
        return 1 / (1 + np.exp(-x))
    if x.dtype == np.float32 and (t := one_plus_exp_neg(x, rows)) is not None:
        return np.divide(1, t, out=t)
    out = np.exp(-np.abs(x), out=np.empty_like(x))  # in (0, 1]: never overflows; an array for a 0-d x
    pos = x >= 0
    num = np.where(pos, 1, out)
    return np.divide(num, 1 + out, out=out).astype(x.dtype, copy=False)


def sigmoid_grad(g: np.ndarray, y: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``g * (1 - y) * y`` into ``out`` (of the operands' shape; it may be ``g``)."""
    one_minus = np.subtract(1, y, dtype=y.dtype)
    np.multiply(g, one_minus, out=out)
    return np.multiply(out, y, out=out)
