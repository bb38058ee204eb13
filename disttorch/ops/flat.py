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
    """``value``, computed already, as a function of ``inputs`` with a zero derivative; the
    node takes the name PyTorch gives the op (``FloorBackward0``)."""

    _raw = True  # no tensor ops inside: no grad-mode switch, no ctx when nothing records

    @staticmethod
    def forward(ctx, value, name, *inputs):
        ctx._node_name = name
        return value

    @staticmethod
    def backward(ctx, g):
        zeros = [None if m is None else Tensor._make(np.zeros(*m)) for m in ctx._input_meta[2:]]
        return (None, None, *zeros)


def flat(value: np.ndarray, name: str, *inputs: Any) -> Tensor:
    """``value`` as the result of a piecewise-constant op of ``inputs`` (tensors or numbers),
    its node named ``name`` as PyTorch names it."""
    return Flat.apply(value, name, *inputs)
