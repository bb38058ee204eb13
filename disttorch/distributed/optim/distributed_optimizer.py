"""``DistributedOptimizer``: one optimizer per worker that owns parameters, stepped together.

Each owner builds a local optimizer over its parameters (from their RRefs); ``step(context_id)``
asks every owner, in parallel, to load the gradients the distributed backward accumulated
in that context as ``.grad`` and take one step.
"""

from __future__ import annotations

import threading
from typing import Any

from ..autograd import get_gradients
from ..rpc import api
from ..rpc import dist_autograd_container as contexts
from ..rpc.rref import RRef, remote

__all__ = ["DistributedOptimizer"]


class _LocalOptimizer:
    """On an owner: the optimizer of its parameters. Steps of one optimizer class on one
    worker run one at a time (a step from two trainers at once would mix their gradients)."""

    _locks: dict[type, threading.Lock] = {}
    _locks_guard = threading.Lock()

    def __init__(self, optimizer_class: type, params: list[RRef], args: tuple, kwargs: dict) -> None:
        self._params = [p.local_value() for p in params]
        self.optim = optimizer_class(self._params, *args, **kwargs)
        with _LocalOptimizer._locks_guard:
            self._lock = _LocalOptimizer._locks.setdefault(optimizer_class, threading.Lock())

    def step(self, context_id: int) -> None:
        grads = get_gradients(context_id)
        with self._lock:
            for p in self._params:
                p.grad = grads.get(p)
            self.optim.step()


def _step(optimizer: RRef, context_id: int) -> None:
    optimizer.local_value().step(context_id)


class DistributedOptimizer:
    """Optimize parameters spread over workers, from the gradients of a distributed backward.

    Args:
        optimizer_class: a ``torch.optim`` optimizer class (built on each owner).
        params_rref: ``RRef`` s of the parameters, on any workers.
        *args, **kwargs: the optimizer's arguments (``lr=...``).
    """

    def __init__(self, optimizer_class: type, params_rref: list[RRef], *args: Any, **kwargs: Any) -> None:
        by_owner: dict[int, list[RRef]] = {}
        for p in params_rref:
            by_owner.setdefault(p.owner().id, []).append(p)
        self.remote_optimizers = [
            remote(owner, _LocalOptimizer, args=(optimizer_class, params, args, kwargs))
            for owner, params in by_owner.items()
        ]

    def step(self, context_id: int) -> None:
        """One step on every owner with the gradients of ``context_id``; returns when all are done."""
        contexts.get(context_id)  # an unknown context is the caller's error, raised here
        futures = [
            api.rpc_async(opt.owner(), _step, args=(opt, context_id)) for opt in self.remote_optimizers
        ]
        for fut in futures:
            fut.wait()
