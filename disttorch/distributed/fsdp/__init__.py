"""``disttorch.distributed.fsdp`` (mirrors ``torch.distributed.fsdp``): fully sharded data
parallel. The implementation lives in ``disttorch.nn.parallel.fsdp`` (where ``nn`` and
``distributed`` meet); this module re-exports it lazily, as ``distributed`` never imports ``nn``."""

from typing import Any

__all__ = [
    "CPUOffloadPolicy",
    "FSDPModule",
    "MixedPrecisionPolicy",
    "OffloadPolicy",
    "UnshardHandle",
    "fully_shard",
    "register_fsdp_forward_method",
]


def __getattr__(name: str) -> Any:
    from ...nn.parallel import fsdp

    if name in fsdp.__all__:
        return getattr(fsdp, name)
    raise AttributeError(f"module 'disttorch.distributed.fsdp' has no attribute '{name}'")
