"""The enums and configuration records of the ``FullyShardedDataParallel`` wrapper (mirrors
``torch.distributed.fsdp.api``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto
from typing import Any

__all__ = [
    "ShardingStrategy",
    "BackwardPrefetch",
    "MixedPrecision",
    "CPUOffload",
    "StateDictType",
    "StateDictConfig",
    "FullStateDictConfig",
    "ShardedStateDictConfig",
    "LocalStateDictConfig",
    "OptimStateDictConfig",
    "FullOptimStateDictConfig",
    "ShardedOptimStateDictConfig",
    "LocalOptimStateDictConfig",
    "StateDictSettings",
]


class ShardingStrategy(Enum):
    """``FULL_SHARD``: shard parameters, gradients and optimiser state, free parameters after
    forward; ``SHARD_GRAD_OP``: keep them gathered from forward to backward; ``NO_SHARD``:
    replicate (like DDP); ``HYBRID_SHARD``: full sharding inside a host, replication across
    hosts; ``_HYBRID_SHARD_ZERO2``: the same with ``SHARD_GRAD_OP`` inside a host."""

    FULL_SHARD = auto()
    SHARD_GRAD_OP = auto()
    NO_SHARD = auto()
    HYBRID_SHARD = auto()
    _HYBRID_SHARD_ZERO2 = auto()


class BackwardPrefetch(Enum):
    """When backward starts the next unit's all-gather: both start it when a unit's backward
    begins (the gathers run on the communication thread while backward computes)."""

    BACKWARD_PRE = auto()
    BACKWARD_POST = auto()


class StateDictType(Enum):
    """What ``state_dict()`` of the wrapper returns: whole tensors (``FULL_STATE_DICT``) or
    every rank's shards as DTensors (``SHARDED_STATE_DICT``; ``LOCAL_STATE_DICT`` likewise)."""

    FULL_STATE_DICT = auto()
    LOCAL_STATE_DICT = auto()
    SHARDED_STATE_DICT = auto()


@dataclass
class MixedPrecision:
    """The wrapper's mixed precision: ``param_dtype`` for compute, ``reduce_dtype`` for
    gradient reduction, ``buffer_dtype`` for buffers."""

    param_dtype: Any = None
    reduce_dtype: Any = None
    buffer_dtype: Any = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True
    _module_classes_to_ignore: Any = ()


@dataclass
class CPUOffload:
    """Accepted for compatibility: parameters are in CPU memory already on every rank."""

    offload_params: bool = False


@dataclass
class StateDictConfig:
    offload_to_cpu: bool = False


@dataclass
class FullStateDictConfig(StateDictConfig):
    """``rank0_only``: only rank 0 gets the values (the others an empty dict)."""

    rank0_only: bool = False


@dataclass
class ShardedStateDictConfig(StateDictConfig):
    _use_dtensor: bool = False


@dataclass
class LocalStateDictConfig(StateDictConfig):
    pass


@dataclass
class OptimStateDictConfig:
    offload_to_cpu: bool = True


@dataclass
class FullOptimStateDictConfig(OptimStateDictConfig):
    rank0_only: bool = False


@dataclass
class ShardedOptimStateDictConfig(OptimStateDictConfig):
    _use_dtensor: bool = False


@dataclass
class LocalOptimStateDictConfig(OptimStateDictConfig):
    offload_to_cpu: bool = False


@dataclass
class StateDictSettings:
    state_dict_type: StateDictType
    state_dict_config: StateDictConfig
    optim_state_dict_config: OptimStateDictConfig
