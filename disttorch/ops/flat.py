"""Results whose derivative is zero wherever it exists: rounding (``floor``, ``ceil``,
``trunc``, ``round``), ``sign``, ``fill``.

PyTorch records a node for them that passes zeros back, so a graph through them still
reaches its inputs: the result requires grad when an input does, and a backward through it
gives that input a zero gradient (not ``None``, and not "does not require grad").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Function

__all__ = ["flat"]


class Flat(Function):
    """``value``, computed already, as a function of ``inputs`` with a zero derivative."""

    @staticmethod
    def forward(ctx, value, *inputs):
        return value

    @staticmethod
    def backward(ctx, g):
        zeros = [None if m is None else Tensor._make(np.zeros(*m)) for m in ctx._input_meta[1:]]
        return (None, *zeros)


def flat(value: np.ndarray, *inputs: Any) -> Tensor:
    """``value`` as the result of a piecewise-constant op of ``inputs`` (tensors or numbers)."""
    return Flat.apply(value, *inputs)
