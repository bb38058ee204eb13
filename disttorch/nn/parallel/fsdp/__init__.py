"""Fully Sharded Data Parallel on the CPU ranks of disttorch (the implementation behind
``disttorch.distributed.fsdp``, which re-exports it: FSDP is where ``nn`` and
``distributed`` meet, so it lives in this layer beside DDP).

- ``_param.py``: one parameter's shard and gathered form;
- ``_unit.py``: one unit's all-gather and reduce-scatter;
- ``_state.py``: the forward/backward hooks and the root's iteration;
- ``_api.py``: ``fully_shard``, ``FSDPModule`` and the policies.
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

__all__ = [
    "CPUOffloadPolicy",
    "FSDPModule",
    "MixedPrecisionPolicy",
    "OffloadPolicy",
    "UnshardHandle",
    "fully_shard",
    "register_fsdp_forward_method",
]
