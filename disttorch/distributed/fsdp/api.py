"""``disttorch.distributed.fsdp.api`` (mirrors ``torch.distributed.fsdp.api``): a lazy
re-export of ``disttorch.nn.parallel.fsdp.api`` (see this package's header)."""

from typing import Any


def __getattr__(name: str) -> Any:
    from ...nn.parallel.fsdp import api

    return getattr(api, name)
