"""``disttorch.distributed.tensor.parallel.style`` (mirrors ``torch.distributed.tensor.parallel.style``): a
lazy re-export of ``disttorch.nn.parallel.tensor_parallel.style`` (see this package's header)."""

from typing import Any


def __getattr__(name: str) -> Any:
    from ....nn.parallel.tensor_parallel import style

    return getattr(style, name)
