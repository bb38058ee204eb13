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

from typing import Any, Callable

import numpy as np

from ..._dtype import scalar_type_name
from ..._tensor import Tensor
from ...autograd.engine import edges_needed
from ...autograd.fused_backward import fused_backward
from ...autograd.grad_mode import is_grad_enabled

__all__ = ["check_same_dtype", "folded", "needed_grads", "numpy_backward", "recorded"]


def numpy_backward(
    name: str,
    fn: Callable[[np.ndarray], tuple],
    grad: Tensor,
    *depends_on: Tensor | None,
    jvp: Callable[..., Tensor] | None = None,
    batched: Callable[[np.ndarray], tuple] | None = None,
    in_tensor_ops: Callable[[Tensor], tuple] | None = None,
) -> tuple:
    """Call ``fn(grad_array)`` (returning one array or None per forward input) and wrap the
    results as tensors. ``depends_on`` lists the saved tensors the gradients are functions
    of (weights, inputs): under ``create_graph`` the results then require grad, and
    differentiating them w.r.t. those raises an error naming ``name``, unless the op gives
    ``in_tensor_ops(grad)``, the same gradients in differentiable tensor ops of them (or
    NotImplemented), which a recorded pass then runs. ``jvp``, given one tangent (or None) per
    forward input, returns the op's Jacobian-vector product with tensor ops: the derivative of
    these gradients w.r.t. ``grad`` (``autograd.fused_backward``). ``batched``: ``fn`` for a
    gradient array with one more leading dim (a batch of cotangents, see :func:`folded`), so
    that a batched backward pass calls it once."""
    return fused_backward(name, fn, (grad,), depends_on, jvp, batched, recorded=in_tensor_ops)


def recorded(grad: Tensor) -> bool:
    """Whether the backward now running is recorded (``create_graph=True``) for a plain
    gradient: an op whose gradients can be written with differentiable tensor ops then
    returns those (differentiable again in every argument: a gradient penalty's second
    derivative) instead of one :func:`numpy_backward` node."""
    return is_grad_enabled() and type(grad) is Tensor


def folded(
    fn: Callable[..., tuple], unbatched: bool, *per_sample: np.ndarray
) -> Callable[[np.ndarray], tuple]:
    """The ``batched`` form of a backward ``fn(g, *per_sample)`` of a gradient whose leading
    dim is the op's batch (N): the cotangents' batch is folded into N (an unbatched op's batch
    of cotangents becomes its N, its saved arrays having an N of 1), and the arrays saved per
    sample (``per_sample``, N in front) are repeated to match."""

    def run(g: np.ndarray) -> tuple:
        b = g.shape[0]
        rows = g if unbatched else g.reshape(b * g.shape[1], *g.shape[2:])
        saved = [np.broadcast_to(a[None], (b, *a.shape)).reshape(-1, *a.shape[1:]) for a in per_sample]
        out = fn(rows, *saved)
        return tuple(a if a is None or unbatched else a.reshape(b, -1, *a.shape[1:]) for a in out)

    return run


def needed_grads(ctx: Any, k: int) -> tuple[bool, ...]:
    """Which of the first ``k`` inputs of the node ``ctx`` (whose backward is running) this
    pass needs a gradient for."""
    return tuple(a and b for a, b in zip(ctx.needs_input_grad[:k], edges_needed(ctx)[:k]))


def check_same_dtype(x: np.ndarray, other: np.ndarray) -> None:
    """Raise PyTorch's kernel message when ``other`` (a weight...) differs in dtype from ``x``."""
    if other.dtype != x.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_type_name(x.dtype)} but found {scalar_type_name(other.dtype)}"
        )
