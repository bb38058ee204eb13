"""Results whose derivative is zero wherever it exists: rounding (``floor``, ``ceil``,
``trunc``, ``round``), ``sign``, ``fill``, ``div`` with a ``rounding_mode``; and results of
ops PyTorch records without a derivative (``floor_divide``, ``heaviside``, ``histogram``,
``unique``).

PyTorch records a node for them that passes zeros back, so a graph through them still
reaches its inputs: the result requires grad when an input does, and a backward through it
gives that input a zero gradient (not ``None``, and not "does not require grad"). For an op
without a derivative the node raises when backward reaches it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Function

__all__ = ["flat", "no_derivative"]


class Flat(Function):
    """``value``, computed already, as a function of ``inputs`` with a zero derivative (or,
    given ``error``, none: backward raises it); the node takes the name PyTorch gives the op
    (``FloorBackward0``)."""

    _raw = True  # no tensor ops inside: no grad-mode switch, no ctx when nothing records

    @staticmethod
    def forward(ctx, value, name, error, *inputs):
        ctx._node_name = name
        ctx.error = error
        return value

    @staticmethod
    def backward(ctx, g):
        if isinstance(ctx.error, Exception):
            raise ctx.error
        if ctx.error is _UNDEFINED:
            return (None,) * len(ctx._input_meta)
        zeros = [None if m is None else Tensor._make(np.zeros(*m)) for m in ctx._input_meta[3:]]
        return (None, None, None, *zeros)


#: ``Flat``'s ``error`` for a node that passes no gradient (PyTorch's undefined one: an input's
#: ``.grad`` stays ``None``), where most pass zeros
_UNDEFINED = "undefined"


def flat(value: np.ndarray, name: str, *inputs: Any, undefined: bool = False) -> Tensor:
    """``value`` as the result of a piecewise-constant op of ``inputs`` (tensors or numbers),
    its node named ``name`` as PyTorch names it; with ``undefined`` the node passes no
    gradient at all (``vector_norm``'s ``ord=0``: the inputs' ``.grad`` stays ``None``)."""
    return Flat.apply(value, name, _UNDEFINED if undefined else None, *inputs)


def no_derivative(value: np.ndarray, op: str, *inputs: Any, declared: bool = False) -> Tensor:
    """``value`` as the result of op ``op`` of ``inputs`` that has no derivative: PyTorch's
    ``NotImplemented`` node (backward raises ``derivative for aten::<op> is not implemented``),
    or with ``declared``, the op's own node that raises ``the derivative for '<op>' is not
    implemented.`` (a ``NotImplementedError``; ``_unique2`` names ``Unique2Backward0``)."""
    if value.dtype.kind not in "fcV":  # an integer or bool result never requires grad
        return Tensor._make(value)
    if declared:
        name = "".join(p.title() for p in op.strip("_").split("_")) + "Backward0"
        error: Exception = NotImplementedError(f"the derivative for '{op}' is not implemented.")
    else:
        name, error = (
            "torch::autograd::NotImplemented",
            RuntimeError(f"derivative for aten::{op} is not implemented"),
        )
    return Flat.apply(value, name, error, *inputs)
