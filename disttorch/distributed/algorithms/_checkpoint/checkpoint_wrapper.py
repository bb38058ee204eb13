"""``torch.distributed.algorithms._checkpoint.checkpoint_wrapper``: a lazy re-export of
``disttorch.nn.parallel.checkpoint_wrapper`` (``distributed`` does not import ``nn``; see
``disttorch/distributed/fsdp/wrap.py``)."""

from typing import Any


def __getattr__(name: str) -> Any:
    from ....nn.parallel import checkpoint_wrapper

    return getattr(checkpoint_wrapper, name)
