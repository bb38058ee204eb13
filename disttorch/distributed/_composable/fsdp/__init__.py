"""``disttorch.distributed._composable.fsdp``: the older home of ``fully_shard``; a lazy
re-export of ``disttorch.distributed.fsdp`` (whose header says why it is lazy)."""

from typing import Any


def __getattr__(name: str) -> Any:
    from ... import fsdp

    return getattr(fsdp, name)
