"""``disttorch.distributed.fsdp.fully_sharded_data_parallel`` (mirrors
``torch.distributed.fsdp.fully_sharded_data_parallel``): a lazy re-export of
``disttorch.nn.parallel.fsdp.fully_sharded_data_parallel``, and of the package's names
(``ShardingStrategy``, ``BackwardPrefetch``, ...) that PyTorch's module also offers."""

from typing import Any


def __getattr__(name: str) -> Any:
    from ...nn.parallel import fsdp
    from ...nn.parallel.fsdp import fully_sharded_data_parallel

    if hasattr(fully_sharded_data_parallel, name):
        return getattr(fully_sharded_data_parallel, name)
    return getattr(fsdp, name)
