"""``dist_autograd.context()`` and ``get_gradients``."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ..rpc import api
from ..rpc import dist_autograd_container as contexts

__all__ = ["context", "get_gradients"]


class context:  # noqa: N801 - PyTorch's name
    """A distributed autograd context: ``with context() as context_id:`` wraps a forward and
    a backward pass that cross RPC calls. Leaving it frees what it holds, on every worker
    it reached."""

    def __enter__(self) -> int:
        self._ctx = contexts.new_context()
        return self._ctx.context_id

    def __exit__(self, *exc: Any) -> None:
        released = contexts.release(self._ctx.context_id)
        if released is not None and api.is_initialized():
            _tell_workers(released)


def _tell_workers(ctx: contexts.DistAutogradContext) -> None:
    """Ask the workers ``ctx``'s messages went to to release it too (they pass it on)."""
    me = api.require_state().me.id
    for worker in ctx.workers - {me}:
        api.rpc_async(worker, _release_context, args=(ctx.context_id,))


def _release_context(context_id: int) -> None:
    released = contexts.release(context_id)
    if released is not None:
        _tell_workers(released)


def get_gradients(context_id: int) -> dict[Tensor, Tensor]:
    """The gradients accumulated on this worker in context ``context_id``: ``{tensor: grad}``."""
    ctx = contexts.get(context_id)
    with ctx.lock:
        return dict(ctx.grads)
