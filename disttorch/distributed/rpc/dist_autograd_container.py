"""The distributed autograd contexts of this worker (the bookkeeping under
``torch.distributed.autograd``).

A context is made by ``dist_autograd.context()`` on one worker and travels with every RPC
sent inside it; the receiving worker makes a context of the same id on first sight and runs
the call inside it. In a context, each tensor that requires grad and crosses an RPC leaves a
record on both sides:

* the sender keeps the tensor under a *send id* (backward later continues from it, with the
  gradient the receiver sends back);
* the receiver gets a fresh leaf that requires grad and remembers it came from
  (sender, send id): a gradient reaching that leaf is sent back to the sender.

Gradients of the other leaves (parameters) are accumulated in the context, never in ``.grad``.
The context id holds the creating worker's id in its top 16 bits, so ids never collide.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..._tensor import Tensor
from .serialization import Session

__all__ = ["DistAutogradContext", "new_context", "current", "get", "get_or_create", "release", "running_in"]


@dataclass(eq=False)
class DistAutogradContext:
    """What one distributed autograd context holds on this worker."""

    context_id: int
    sends: dict[int, Tensor] = field(default_factory=dict)
    recvs: dict[int, tuple[Tensor, int, int]] = field(
        default_factory=dict
    )  # id(leaf) -> (leaf, peer, send id)
    grads: dict[Tensor, Tensor] = field(default_factory=dict)
    workers: set[int] = field(default_factory=set)  # the workers this context's messages went to
    lock: threading.Lock = field(default_factory=threading.Lock)
    _send_ids: Iterator[int] = field(default_factory=itertools.count)

    def _context_id(self) -> int:
        return self.context_id

    def record_send(self, tensor: Tensor) -> int:
        with self.lock:
            send_id = next(self._send_ids)
            self.sends[send_id] = tensor
        return send_id

    def record_recv(self, leaf: Tensor, peer: int, send_id: int) -> None:
        with self.lock:
            self.recvs[id(leaf)] = (leaf, peer, send_id)

    def accumulate(self, leaf: Tensor, grad: Tensor) -> None:
        """Add ``grad`` to the gradient of ``leaf`` kept by this context."""
        with self.lock:
            old = self.grads.get(leaf)
            self.grads[leaf] = grad.detach().clone() if old is None else old + grad

    def session(self, peer: int) -> Session:
        """The serialization hooks of a message to or from ``peer`` within this context."""
        with self.lock:
            self.workers.add(peer)
        return Session(peer, self.record_send, self.record_recv)


_contexts: dict[int, DistAutogradContext] = {}
_lock = threading.Lock()
_local = threading.local()
_worker_id = [0]
_counter = itertools.count()


def init(worker_id: int) -> None:
    """Start numbering this worker's contexts (``init_rpc``); forget earlier ones."""
    with _lock:
        _contexts.clear()
        _worker_id[0] = worker_id


def new_context() -> DistAutogradContext:
    """A new context, made current in this thread."""
    if current() is not None:
        raise RuntimeError("Already have an autograd context id for this thread.")
    context_id = (_worker_id[0] << 48) | (next(_counter) & ((1 << 48) - 1))
    ctx = get_or_create(context_id)
    _local.current = ctx
    return ctx


def current() -> DistAutogradContext | None:
    """The context this thread runs in, or ``None``."""
    return getattr(_local, "current", None)


def get(context_id: int) -> DistAutogradContext:
    """The context of ``context_id``; ``RuntimeError`` (PyTorch's words) if there is none here."""
    with _lock:
        ctx = _contexts.get(context_id)
    if ctx is None:
        raise RuntimeError(f"Could not find autograd context with id: {context_id}")
    return ctx


def get_or_create(context_id: int) -> DistAutogradContext:
    """The context of ``context_id``, made if this worker has not seen it yet."""
    with _lock:
        ctx = _contexts.get(context_id)
        if ctx is None:
            ctx = _contexts[context_id] = DistAutogradContext(context_id)
        return ctx


def release(context_id: int) -> DistAutogradContext | None:
    """Forget ``context_id`` here (its tensors and gradients go); return it, if it was known."""
    with _lock:
        ctx = _contexts.pop(context_id, None)
    if current() is ctx:
        _local.current = None
    return ctx


@contextlib.contextmanager
def running_in(ctx: DistAutogradContext | None) -> Iterator[None]:
    """Make ``ctx`` this thread's current context for the block (an RPC runs in its caller's)."""
    previous = current()
    _local.current = ctx
    try:
        yield
    finally:
        _local.current = previous
