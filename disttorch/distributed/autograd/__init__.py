"""``torch.distributed.autograd``: backward passes across RPC calls.

Inside ``with dist_autograd.context() as context_id:`` every RPC (``rpc_sync``,
``rpc_async``, ``remote``, ``RRef.to_here``) records, for each tensor that requires grad
and crosses it, a *send* on the sender and a *receive* on the receiver (bookkeeping in
``rpc/dist_autograd_container.py``). :func:`backward` then runs the local graph from the
roots to its leaves; a gradient reaching a received tensor is sent back to the worker that
sent it, which goes on from the tensor it sent, and so on across the workers. Gradients of
the leaves (parameters) accumulate in the context on their own worker, never in ``.grad``:
read them with :func:`get_gradients`, or step them with
``torch.distributed.optim.DistributedOptimizer``. DDP's hooks fire as in a local backward
and all-reduce into the context.

Each worker's part of a backward frees the graph it ran unless ``retain_graph=True``, as in
PyTorch. Difference from PyTorch: each gradient crossing a worker boundary is one RPC of its
own and runs that worker's graph once, so two sends that share graph nodes need
``retain_graph=True``.
"""

from .backward import backward
from .context import context, get_gradients

__all__ = ["backward", "context", "get_gradients", "is_available"]


def is_available() -> bool:
    """True: disttorch has distributed autograd."""
    return True
