"""``disttorch.distributed._shard.sharded_tensor`` (mirrors
``torch.distributed._shard.sharded_tensor``); see ``api.py``."""

from .api import Shard, ShardedTensor, ShardedTensorMetadata, TensorProperties

__all__ = ["Shard", "ShardedTensor", "ShardedTensorMetadata", "TensorProperties"]
