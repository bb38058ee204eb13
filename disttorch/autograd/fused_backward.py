"""Backwards computed in NumPy (fused layer kernels, matrix decompositions), as graph nodes.

An op whose backward is NumPy code is much faster than one whose gradient is composed of
many small tensor ops, but that gradient is not itself recorded. ``fused_backward`` runs such
a backward as a node of its own: in an ordinary ``backward()`` it costs one call; under
``create_graph=True`` it records a node whose results require grad, so that a second
differentiation is never silently wrong:

- w.r.t. the op's inputs (a true second derivative): where the op gives its backward written
  with tensor ops too (``recorded``), a recorded pass (``create_graph=True``, other than forward-mode
  AD's linearisation) runs that instead of the node, so that it differentiates to any order;
  otherwise it raises, naming the op;
- w.r.t. the incoming gradients only (the double-backward trick behind ``torch.func.jvp``,
  ``jacfwd`` and forward-mode AD): the backward is linear in them, and its derivative in the
  direction of a tangent of the op's inputs is the op's Jacobian-vector product, which the op
  may supply as ``jvp`` (written with tensor ops, so it is differentiable in turn).

In a pass of batched gradients (``autograd.grad(..., is_grads_batched=True)``, ``jacrev``) an op
may supply ``batched``: the same backward for gradient arrays with one more leading dim (the
batch), so that the node runs once for the batch instead of once per entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .._tensor import Tensor
from .engine import edges_needed
from .function import Function
from .grad_mode import is_grad_enabled as recording_grad
from .grad_mode import linearizing, tensor_backwards

__all__ = ["BATCHED_FUSED", "fused_backward"]

#: ``run(batched, grads)``: the gradients of a node of batched ``grads`` computed by ``batched``
#: on their arrays with the batch in front, batched again, or NotImplemented when it cannot
#: (``func._batched_backward``, a layer above, sets it)
BATCHED_FUSED: list[Callable] = []


class _FusedBackward(Function):
    """Node for a NumPy backward (see the module docstring)."""

    _raw = True

    @staticmethod
    def forward(ctx, fn, name, jvp, n_grads, *tensors):
        ctx.op_name, ctx.jvp, ctx.n_grads = name, jvp, n_grads
        ctx.set_materialize_grads(False)  # a tangent that does not flow stays None for jvp
        return fn(*(g._data if g is not None else None for g in tensors[:n_grads]))

    @staticmethod
    def backward(ctx, *tangents):
        needed = edges_needed(ctx)  # fn, name, jvp, n_grads, *grads, *depends_on
        n = ctx.n_grads
        if ctx.jvp is None or any(needed[4 + n :]):
            raise RuntimeError(
                f"double backward through {ctx.op_name} is not supported: its "
                f"backward is a fused NumPy kernel (differentiate it once)"
            )
        out = ctx.jvp(*tangents)
        out = out if isinstance(out, tuple) else (out,)
        return (None, None, None, None) + tuple(out) + (None,) * (len(needed) - 4 - n)


def fused_backward(
    name: str,
    fn: Callable[..., tuple],
    grads: Sequence[Tensor | None],
    depends_on: Sequence[Tensor | None],
    jvp: Callable[..., Tensor | tuple | None] | None = None,
    batched: Callable[..., tuple] | None = None,
    recorded: Callable[..., tuple] | None = None,
) -> tuple:
    """``fn(*grad_arrays)`` (one array or None per forward input) as tensors, recorded as one
    node when autograd records. ``depends_on``: the tensors the gradients are functions of
    (the op's inputs, saved weights). ``jvp``, given one tangent (or None) per forward input,
    returns the op's Jacobian-vector product for each of ``grads`` (a tensor when there is one).
    ``recorded(*grads)``: the same gradients made of differentiable tensor ops of ``depends_on``
    (or NotImplemented where it has none), for a recorded pass that may differentiate them
    w.r.t. ``depends_on`` (see the module docstring).

    A pass of batched gradients (``tensor_backwards``) with batched ``grads`` calls ``batched``
    (``fn`` for arrays with a leading batch dim) when it is given and the pass is not recorded;
    otherwise it gets an error, and the node then runs once per entry (``fn`` may read the
    arrays of the tensors it closes over)."""
    if tensor_backwards[0] and any(g is not None and type(g) is not Tensor for g in grads):
        if batched is not None and BATCHED_FUSED and not recording_grad():
            out = BATCHED_FUSED[0](batched, grads)
            if out is not NotImplemented:
                return out
        raise RuntimeError(f"the backward of {name} is a fused NumPy kernel: it takes no batched gradients")
    if (
        recorded is not None
        and recording_grad()
        and not linearizing[0]
        and any(t is not None and t.requires_grad for t in depends_on)
    ):
        out = recorded(*grads)
        if out is not NotImplemented:
            return out
    return _FusedBackward.apply(fn, name, jvp, len(grads), *grads, *depends_on)
