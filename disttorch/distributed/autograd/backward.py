"""``dist_autograd.backward``: a backward pass that follows the RPCs of a context.

On each worker the local part of the graph runs through the ordinary engine
(``autograd.engine.run_backward``) with the leaves' gradients redirected
(``autograd.grad_sink``) to this pass: a leaf received by RPC sends its gradient back to the
worker that sent the tensor, which runs backward from that tensor in turn
(:func:`_backward_from_send`); every other leaf accumulates in the context, never in
``.grad``. The leaves' hooks run as in a local pass, so DDP's reducer all-reduces the
gradients of its parameters during the pass and writes the averages into the context
(as PyTorch's reducer does under distributed autograd). The pass returns once every
worker's part is done. Backward being linear, a tensor that gets its gradient in several
pieces simply runs once per piece.

Each worker's part frees the graph it ran unless ``retain_graph=True``, as PyTorch: a second
``backward`` through it in the same context then raises PyTorch's error, prefixed by
``Error on Node <worker id>:`` as PyTorch's distributed engine prefixes it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from ..._creation import ones_like
from ..._tensor import Tensor
from ...autograd import grad_sink
from ...autograd.engine import run_backward
from ...futures import wait_all
from ..rpc import api
from ..rpc import dist_autograd_container as contexts

__all__ = ["backward"]

#: The engine keeps per-pass state in the process; passes of one worker run one at a time.
_engine_lock = threading.Lock()


def backward(context_id: int, roots: Sequence[Tensor], retain_graph: bool = False) -> None:
    """Run backward from the scalar tensors ``roots`` across every worker the context reached.

    Args:
        context_id: the id ``dist_autograd.context()`` gave.
        roots: scalar tensors that require grad (a gradient of 1 starts from each).
        retain_graph: keep the graph of every worker's part, so that it may be
            backpropagated again in this context.
    """
    ctx = contexts.get(context_id)
    roots = list(roots)
    for i, root in enumerate(roots):
        if not isinstance(root, Tensor) or not root.requires_grad:
            raise RuntimeError(f"element {i} of the roots does not require grad and does not have a grad_fn")
        if root.numel() != 1:
            raise RuntimeError(
                f"root {i} of shape {tuple(root.shape)} is not a scalar, all roots need to be scalar"
            )
    _propagate(ctx, roots, [ones_like(r) for r in roots], retain_graph)


class _PassSink:
    """Where one worker's part of a distributed backward puts leaf gradients: the context,
    or (a leaf received by RPC) the list of gradients to send back to its sender."""

    def __init__(self, ctx: contexts.DistAutogradContext) -> None:
        self.ctx = ctx
        self.onward: list[tuple[int, int, Tensor]] = []  # (sender, send id, gradient)

    def accumulate(self, leaf: Tensor, grad: Tensor) -> None:
        received = self.ctx.recvs.get(id(leaf))
        if received is None:
            self.ctx.accumulate(leaf, grad)
        else:
            _, sender, send_id = received
            self.onward.append((sender, send_id, grad))

    def get(self, leaf: Tensor) -> Tensor | None:
        return self.ctx.grads.get(leaf)

    def set(self, leaf: Tensor, grad: Tensor) -> None:
        with self.ctx.lock:
            self.ctx.grads[leaf] = grad


def _propagate(
    ctx: contexts.DistAutogradContext, tensors: list[Tensor], grads: list[Tensor], retain_graph: bool
) -> None:
    """Backward from ``tensors`` (with ``grads``) on this worker, then on the workers that sent
    the leaves it reaches."""
    sink = _PassSink(ctx)
    try:
        with _engine_lock, grad_sink.redirect_to(sink):
            run_backward(tensors, grads, retain_graph=retain_graph, create_graph=False)
        onward = [
            api.rpc_async(sender, _backward_from_send, args=(ctx.context_id, send_id, grad, retain_graph))
            for sender, send_id, grad in sink.onward
        ]
        wait_all(onward)
    except RuntimeError as e:
        raise RuntimeError(f"Error on Node {api.require_state().me.id}: {e}") from e


def _backward_from_send(context_id: int, send_id: int, grad: Tensor, retain_graph: bool) -> None:
    """On the worker that sent a tensor: go on backward from it with the gradient it got."""
    ctx = contexts.get(context_id)
    _propagate(ctx, [ctx.sends[send_id]], [grad], retain_graph)
