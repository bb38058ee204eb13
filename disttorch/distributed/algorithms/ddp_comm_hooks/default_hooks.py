"""``torch.distributed.algorithms.ddp_comm_hooks.default_hooks``: ``allreduce_hook``, the
float16 and bfloat16 compression hooks and their wrappers, defined beside DDP in
:mod:`disttorch.nn.parallel.comm_hooks` (re-exported lazily: ``distributed`` does not import
``nn``); ``_allreduce_fut``, the averaging all-reduce those hooks and ``post_localSGD_hook``
share, lives here."""

from typing import Any

import numpy as np

__all__ = [  # noqa: F822 (served by __getattr__)
    "allreduce_hook",
    "bf16_compress_hook",
    "bf16_compress_wrapper",
    "fp16_compress_hook",
    "fp16_compress_wrapper",
]


def _allreduce_fut(process_group: Any, tensor: Any) -> Any:
    """Average ``tensor`` over ``process_group`` (default: the world) in place: divide by its
    size, then an asynchronous all-reduce; a future of ``tensor``."""
    from .... import distributed as dist

    np.multiply(tensor._data, 1.0 / dist.get_world_size(process_group), out=tensor._data, casting="unsafe")
    work = dist.all_reduce(tensor, group=process_group, async_op=True)
    return work.get_future().then(lambda fut: (fut.value(), tensor)[1])  # value(): raise a failure


def __getattr__(name: str) -> Any:
    if name in __all__:
        from ....nn.parallel import comm_hooks

        return getattr(comm_hooks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
