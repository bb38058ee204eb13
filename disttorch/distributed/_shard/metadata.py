"""``ShardMetadata`` (mirrors ``torch.distributed._shard.metadata``): where one shard of a
``ShardedTensor`` lies in the whole and which rank holds it."""

from __future__ import annotations

import dataclasses

from ..remote_device import _remote_device

__all__ = ["ShardMetadata"]


@dataclasses.dataclass
class ShardMetadata:
    """A shard: the global index of its first element, its sizes, and its holder
    (``"rank:<r>/<device>"``)."""

    shard_offsets: list[int]
    shard_sizes: list[int]
    placement: _remote_device | None = None

    def __post_init__(self) -> None:
        if isinstance(self.placement, str):
            self.placement = _remote_device(self.placement)
        if len(self.shard_offsets) != len(self.shard_sizes):
            raise ValueError(
                f"shard_offsets and shard_sizes should have the same number of elements, found "
                f"{len(self.shard_offsets)} and {self.shard_sizes} respectively"
            )
        if any(o < 0 for o in self.shard_offsets) or any(s < 0 for s in self.shard_sizes):
            raise ValueError(f"shard_offsets and shard_sizes must be >= 0, got {self}")
