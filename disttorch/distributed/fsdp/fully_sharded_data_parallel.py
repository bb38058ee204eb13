"""``disttorch.distributed.fsdp.fully_sharded_data_parallel`` (mirrors ``torch.distributed.fsdp.fully_sharded_data_parallel``): a lazy
re-export of ``disttorch.nn.parallel.fsdp.fully_sharded_data_parallel`` (see this package's header)."""

from typing import Any


def __getattr__(name: str) -> Any:
    from ...nn.parallel.fsdp import fully_sharded_data_parallel

    return getattr(fully_sharded_data_parallel, name)
