"""``disttorch.distributed.fsdp`` (mirrors ``torch.distributed.fsdp``): fully sharded data
parallel, ``fully_shard`` and the ``FullyShardedDataParallel`` wrapper.

The implementation lives in ``disttorch.nn.parallel.fsdp`` (FSDP is where ``nn`` and
``distributed`` meet, and ``distributed`` never imports ``nn``). This package re-exports it
lazily: a name is looked up there on first use (PEP 562 ``__getattr__``, which also answers
``__all__`` for ``from disttorch.distributed.fsdp import *``). The submodules ``api``,
``wrap`` and ``fully_sharded_data_parallel`` do the same for theirs.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    from ...nn.parallel import fsdp

    if name == "__all__" or name in fsdp.__all__:
        return getattr(fsdp, name)
    raise AttributeError(f"module 'disttorch.distributed.fsdp' has no attribute '{name}'")
