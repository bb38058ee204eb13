"""``torch.distributed.algorithms.ddp_comm_hooks.default_hooks``: ``allreduce_hook``, the
float16 and bfloat16 compression hooks and their wrappers, defined beside DDP in
:mod:`disttorch.nn.parallel.comm_hooks` (re-exported lazily: ``distributed`` does not import
``nn``)."""

from typing import Any

__all__ = [  # noqa: F822 (served by __getattr__)
    "allreduce_hook",
    "bf16_compress_hook",
    "bf16_compress_wrapper",
    "fp16_compress_hook",
    "fp16_compress_wrapper",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from ....nn.parallel import comm_hooks

        return getattr(comm_hooks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
