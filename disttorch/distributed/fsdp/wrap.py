"""``disttorch.distributed.fsdp.wrap`` (mirrors ``torch.distributed.fsdp.wrap``): a lazy
re-export of ``disttorch.nn.parallel.fsdp.wrap`` (see this package's header)."""

from typing import Any


def __getattr__(name: str) -> Any:
    from ...nn.parallel.fsdp import wrap

    return getattr(wrap, name)
