"""``disttorch.distributed._shard`` (mirrors ``torch.distributed._shard``): the
``ShardedTensor`` that the ``FullyShardedDataParallel`` wrapper's ``SHARDED_STATE_DICT`` and
``LOCAL_STATE_DICT`` give, and its ``ShardMetadata``."""

from .metadata import ShardMetadata

__all__ = ["ShardMetadata"]
