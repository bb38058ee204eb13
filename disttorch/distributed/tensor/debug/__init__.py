"""``torch.distributed.tensor.debug``: ``CommDebugMode``, which counts the collectives a block
of code issues, by kind and by module, and ``visualize_sharding``. ``CommDebugMode`` is
defined beside tensor parallelism, in :mod:`disttorch.nn.parallel.tensor_parallel.comm_debug_mode`
(re-exported lazily: ``distributed`` does not import ``nn``)."""

from typing import Any

from ._visualize_sharding import visualize_sharding

__all__ = ["CommDebugMode", "visualize_sharding"]  # noqa: F822 (CommDebugMode: served by __getattr__)


def __getattr__(name: str) -> Any:
    if name == "CommDebugMode":
        from ....nn.parallel.tensor_parallel import comm_debug_mode

        return getattr(comm_debug_mode, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
