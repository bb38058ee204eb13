"""``torch.distributed.tensor.experimental``: ``implicit_replication``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ._dispatch import implicit_replication_state


@contextlib.contextmanager
def implicit_replication() -> Iterator[None]:
    """Inside, plain tensors combine with ``DTensor`` s as if replicated (outside, only 0-d
    plain tensors do)."""
    before = implicit_replication_state[0]
    implicit_replication_state[0] = True
    try:
        yield
    finally:
        implicit_replication_state[0] = before
