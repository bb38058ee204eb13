"""``disttorch.distributed.tensor.parallel.loss`` (mirrors ``torch.distributed.tensor.parallel.loss``): a
lazy re-export of ``disttorch.nn.parallel.tensor_parallel.loss`` (see this package's header)."""

from typing import Any


def __getattr__(name: str) -> Any:
    from ....nn.parallel.tensor_parallel import loss

    return getattr(loss, name)
