"""Shared plumbing for the fused layer ops of ``nn.functional`` (convolution, pooling,
normalisation, attention): the once-differentiable NumPy backward node and dtype checks.

These ops compute their backward in NumPy from what forward saved (im2col columns,
argmax indices, normalised activations), which is much faster than composing the
gradient from many small tensor ops. ``numpy_backward`` runs such a backward as a graph
node of its own: in an ordinary ``backward()`` it costs one call; under
``create_graph=True`` it records a node that refuses a second differentiation with a
clear error, instead of silently returning gradients that do not depend on the inputs.

An op may give the node its forward-mode rule (``jvp``). The backward is linear in the
output gradient, and its derivative w.r.t. that gradient, in the direction of a tangent of
the op's inputs, is the op's Jacobian-vector product. So a second pass that needs only that
derivative (the double-backward trick of ``torch.func.jvp``/``jacfwd`` and forward-mode AD)
goes through; one that also needs the derivative w.r.t. the saved inputs (a true second
derivative) still raises.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..._dtype import scalar_type_name
from ..._tensor import Tensor
from ...autograd.engine import edges_needed
from ...autograd.function import Function

__all__ = ["numpy_backward", "check_same_dtype"]


class _NumpyBackward(Function):
    """Node for a fused op's NumPy backward (once differentiable)."""

    _raw = True

    @staticmethod
    def forward(ctx, fn, name, jvp, grad, *depends_on):
        ctx.op_name, ctx.jvp = name, jvp
        ctx.set_materialize_grads(False)  # a tangent that does not flow stays None for jvp
        return fn(grad._data)

    @staticmethod
    def backward(ctx, *grads):
        needed = edges_needed(ctx)  # fn, name, jvp, grad, *depends_on
        if ctx.jvp is None or any(needed[4:]):
            raise RuntimeError(
                f"double backward through {ctx.op_name} is not supported: its "
                f"backward is a fused NumPy kernel (differentiate it once)"
            )
        return (None, None, None, ctx.jvp(*grads)) + (None,) * (len(needed) - 4)


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
    ops: the derivative of these gradients w.r.t. ``grad`` (see the module docstring)."""
    return _NumpyBackward.apply(fn, name, jvp, grad, *depends_on)


def check_same_dtype(x: np.ndarray, other: np.ndarray, what: str) -> None:
    """Raise PyTorch's message when ``other`` (weight, bias, ...) differs in dtype from ``x``."""
    if other.dtype != x.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_type_name(x.dtype)} but found {scalar_type_name(other.dtype)} "
            f"(input is {x.dtype}, {what} is {other.dtype})"
        )
