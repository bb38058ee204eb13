"""Shared plumbing for the fused layer ops of ``nn.functional`` (convolution, pooling,
normalisation, attention): the once-differentiable NumPy backward node and dtype checks.

These ops compute their backward in NumPy from what forward saved (im2col columns,
argmax indices, normalised activations), which is much faster than composing the
gradient from many small tensor ops. ``numpy_backward`` runs such a backward as a graph
node of its own: in an ordinary ``backward()`` it costs one call; under
``create_graph=True`` it records a node that refuses a second differentiation with a
clear error, instead of silently returning gradients that do not depend on the inputs.

An op may give the node its forward-mode rule (``jvp``), so that forward-mode AD goes
through it; the node itself is ``autograd.fused_backward``'s.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..._dtype import scalar_type_name
from ..._tensor import Tensor
from ...autograd.fused_backward import fused_backward

__all__ = ["numpy_backward", "check_same_dtype"]


def numpy_backward(
    name: str,
    fn: Callable[[np.ndarray], tuple],
    grad: Tensor,
    *depends_on: Tensor | None,
    jvp: Callable[..., Tensor] | None = None,
) -> tuple:
    """Call ``fn(grad_array)`` (returning one array or None per forward input) and wrap the
    results as tensors. ``depends_on`` lists the saved tensors the gradients are functions
    of (weights, inputs): under ``create_graph`` the results then require grad, and
    differentiating them w.r.t. those raises an error naming ``name``. ``jvp``, given one
    tangent (or None) per forward input, returns the op's Jacobian-vector product with tensor
    ops: the derivative of these gradients w.r.t. ``grad`` (``autograd.fused_backward``)."""
    return fused_backward(name, fn, (grad,), depends_on, jvp)


def check_same_dtype(x: np.ndarray, other: np.ndarray, what: str) -> None:
    """Raise PyTorch's message when ``other`` (weight, bias, ...) differs in dtype from ``x``."""
    if other.dtype != x.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_type_name(x.dtype)} but found {scalar_type_name(other.dtype)} "
            f"(input is {x.dtype}, {what} is {other.dtype})"
        )
