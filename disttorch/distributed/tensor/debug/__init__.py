"""``torch.distributed.tensor.debug``: ``CommDebugMode``, which counts the collectives a block
of code issues, by kind and by module. It is defined beside tensor parallelism, in
:mod:`disttorch.nn.parallel.tensor_parallel.comm_debug_mode` (re-exported lazily:
``distributed`` does not import ``nn``)."""

from typing import Any

__all__ = ["CommDebugMode"]  # noqa: F822 (served by __getattr__)


def __getattr__(name: str) -> Any:
    if name in __all__:
        from ....nn.parallel.tensor_parallel import comm_debug_mode

        return getattr(comm_debug_mode, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
