"""``torch.distributed.tensor.experimental``: ``implicit_replication``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def implicit_replication() -> Iterator[None]:
    """Inside, plain tensors combine with ``DTensor`` s as if replicated. disttorch's
    ``DTensor`` computes on its local shard and already takes plain tensors as they are (the
    same on every rank: replicated), so there is nothing to switch on."""
    yield
