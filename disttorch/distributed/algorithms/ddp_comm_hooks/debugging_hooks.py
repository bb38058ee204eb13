"""``torch.distributed.algorithms.ddp_comm_hooks.debugging_hooks``: ``noop_hook``, which
communicates nothing (each rank keeps its own gradients), to measure DDP without its
all-reduces."""

from __future__ import annotations

from typing import Any

from ....futures import Future

__all__ = ["noop_hook"]


def noop_hook(_: Any, bucket: Any) -> Future:
    """A completed future of the bucket's own (local, not averaged) gradients."""
    fut: Future = Future()
    fut.set_result(bucket.buffer())
    return fut
