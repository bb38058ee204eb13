"""Where a backward pass puts the gradients of leaves: ``.grad``, or a sink standing in for it.

Distributed autograd keeps the gradients of a context apart from ``.grad`` (as PyTorch's
``DistAutogradContext`` does). While :func:`redirect_to` is active in a thread, the engine
hands each leaf's gradient to ``sink.accumulate`` instead of adding it to ``.grad``, and
still runs the leaf's hooks before and its post-accumulate-grad hooks after. Code that reads
or writes a gradient on a leaf's behalf from those hooks (DDP's reducer, which all-reduces
the gradients during the pass and writes the averages back at its end) goes through
:func:`grad_of` and :func:`set_grad`, and so sees the sink's value inside such a pass and
``.grad`` outside one.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any, Protocol

__all__ = ["GradSink", "current", "grad_of", "redirect_to", "set_grad"]

_local = threading.local()


class GradSink(Protocol):
    """What stands in for ``.grad`` during a redirected backward pass."""

    def accumulate(self, leaf: Any, grad: Any) -> None:
        """Add ``grad`` to the gradient kept for ``leaf``."""

    def get(self, leaf: Any) -> Any:
        """The gradient kept for ``leaf`` (``None`` if none)."""

    def set(self, leaf: Any, grad: Any) -> None:
        """Replace the gradient kept for ``leaf``."""


def current() -> GradSink | None:
    """The sink of this thread's backward pass, or ``None`` (gradients go to ``.grad``)."""
    return getattr(_local, "sink", None)


@contextlib.contextmanager
def redirect_to(sink: GradSink) -> Iterator[None]:
    """Leaf gradients of the backward passes run in this block (this thread) go to ``sink``."""
    previous, _local.sink = current(), sink
    try:
        yield
    finally:
        _local.sink = previous


def grad_of(leaf: Any) -> Any:
    """``leaf``'s gradient: the sink's in a redirected pass, else ``leaf.grad``."""
    sink = current()
    return leaf._grad if sink is None else sink.get(leaf)


def set_grad(leaf: Any, grad: Any) -> None:
    """Set ``leaf``'s gradient where :func:`grad_of` reads it."""
    sink = current()
    if sink is None:
        leaf._grad = grad
    else:
        sink.set(leaf, grad)
