"""``loss_parallel()``: cross-entropy over logits sharded on the class dimension (mirrors
``torch.distributed.tensor.parallel.loss``; the computation is in
``distributed/tensor/_ops/_loss.py``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ....distributed.tensor._dispatch import implicit_replication_state
from ....distributed.tensor._ops._loss import loss_parallel_state

__all__ = ["loss_parallel"]


@contextlib.contextmanager
def loss_parallel() -> Iterator[None]:
    """Inside, ``F.cross_entropy`` of a DTensor sharded on the class dimension (the output
    of ``ColwiseParallel(use_local_output=False)``) computes the loss without gathering
    the logits, and its backward leaves the gradient sharded the same way. Plain targets
    count as replicated. ``loss.backward()`` may be called inside or after."""
    before = loss_parallel_state[0], implicit_replication_state[0]
    loss_parallel_state[0] = implicit_replication_state[0] = True
    try:
        yield
    finally:
        loss_parallel_state[0], implicit_replication_state[0] = before
