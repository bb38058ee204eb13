"""``disttorch.distributed.tensor.parallel.api`` (mirrors ``torch.distributed.tensor.parallel.api``): a
lazy re-export of ``disttorch.nn.parallel.tensor_parallel.api`` (see this package's header)."""

from typing import Any


def __getattr__(name: str) -> Any:
    from ....nn.parallel.tensor_parallel import api

    return getattr(api, name)
