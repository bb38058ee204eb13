"""``dist_autograd.backward``: a backward pass that follows the RPCs of a context.

On each worker the local part of the graph runs through the ordinary engine
(``autograd.engine.run_backward``), asked for the gradients of the part's leaves instead of
filling ``.grad``. A leaf received by RPC sends its gradient back to the worker that sent
the tensor, which runs backward from that tensor in turn (:func:`_backward_from_send`); the
other leaves accumulate in the context. The pass returns once every worker's part is done.
Backward being linear, a tensor that gets its gradient in several pieces simply runs once
per piece.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from ..._creation import ones_like
from ..._tensor import Tensor
from ...autograd.engine import reachable_leaves, run_backward
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
        retain_graph: accepted as in PyTorch; the graph is kept until the context exits.
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
    _propagate(ctx, roots, [ones_like(r) for r in roots])


def _propagate(ctx: contexts.DistAutogradContext, tensors: list[Tensor], grads: list[Tensor]) -> None:
    """Backward from ``tensors`` (with ``grads``) on this worker, then on the workers that sent
    the leaves it reaches."""
    leaves = reachable_leaves(tensors)
    with _engine_lock:
        leaf_grads = run_backward(
            tensors, grads, retain_graph=True, create_graph=False, inputs=leaves, accumulate=False
        )
    onward = []
    for leaf, grad in zip(leaves, leaf_grads):
        if grad is None:
            continue
        received = ctx.recvs.get(id(leaf))
        if received is None:
            ctx.accumulate(leaf, grad)
        else:
            _, sender, send_id = received
            onward.append(api.rpc_async(sender, _backward_from_send, args=(ctx.context_id, send_id, grad)))
    wait_all(onward)


def _backward_from_send(context_id: int, send_id: int, grad: Tensor) -> None:
    """On the worker that sent a tensor: go on backward from it with the gradient it got."""
    ctx = contexts.get(context_id)
    _propagate(ctx, [ctx.sends[send_id]], [grad])
