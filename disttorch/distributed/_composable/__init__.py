"""``disttorch.distributed._composable`` (mirrors ``torch.distributed._composable``, where
older code imports ``fully_shard`` from ``_composable.fsdp``)."""
