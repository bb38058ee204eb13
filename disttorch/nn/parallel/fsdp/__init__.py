"""Fully Sharded Data Parallel on the CPU ranks of disttorch (the implementation behind
``disttorch.distributed.fsdp``, which re-exports it: FSDP is where ``nn`` and
``distributed`` meet, so it lives in this layer beside DDP).

- ``_param.py``: one parameter's shard and gathered form;
- ``_unit.py``: one unit's all-gather and reduce-scatter;
- ``_state.py``: the forward/backward hooks and the root's iteration;
- ``_api.py``: ``fully_shard``, ``FSDPModule`` and the policies;
- ``fully_sharded_data_parallel.py``: the ``FullyShardedDataParallel`` wrapper, with its
  enums and configs in ``api.py`` and its auto-wrap policies in ``wrap.py``.
"""

from ._api import (
    CPUOffloadPolicy,
    FSDPModule,
    MixedPrecisionPolicy,
    OffloadPolicy,
    UnshardHandle,
    fully_shard,
    register_fsdp_forward_method,
)
from .api import (
    BackwardPrefetch,
    CPUOffload,
    FullOptimStateDictConfig,
    FullStateDictConfig,
    LocalOptimStateDictConfig,
    LocalStateDictConfig,
    MixedPrecision,
    OptimStateDictConfig,
    ShardedOptimStateDictConfig,
    ShardedStateDictConfig,
    ShardingStrategy,
    StateDictConfig,
    StateDictSettings,
    StateDictType,
)
from .fully_sharded_data_parallel import FullyShardedDataParallel

__all__ = [
    "BackwardPrefetch",
    "CPUOffload",
    "FullOptimStateDictConfig",
    "FullStateDictConfig",
    "FullyShardedDataParallel",
    "LocalOptimStateDictConfig",
    "LocalStateDictConfig",
    "MixedPrecision",
    "OptimStateDictConfig",
    "ShardedOptimStateDictConfig",
    "ShardedStateDictConfig",
    "ShardingStrategy",
    "StateDictConfig",
    "StateDictSettings",
    "StateDictType",
    "CPUOffloadPolicy",
    "FSDPModule",
    "MixedPrecisionPolicy",
    "OffloadPolicy",
    "UnshardHandle",
    "fully_shard",
    "register_fsdp_forward_method",
]
