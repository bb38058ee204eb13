"""``torch.distributed.algorithms.ddp_comm_hooks.quantization_hooks``: DDP hooks that send
gradients as 8-bit integers, defined beside DDP in :mod:`disttorch.nn.parallel.quantization_hooks`
(re-exported lazily: ``distributed`` does not import ``nn``)."""

from typing import Any

__all__ = ["quantization_perchannel_hook", "quantization_pertensor_hook"]  # noqa: F822 (served by __getattr__)


def __getattr__(name: str) -> Any:
    if name in __all__:
        from ....nn.parallel import quantization_hooks

        return getattr(quantization_hooks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
