"""``disttorch.distributed.nn.api.remote_module`` (mirrors PyTorch's module of that name):
``RemoteModule``, re-exported lazily from ``disttorch.nn.parallel.remote_module``."""

from typing import Any

__all__ = ["RemoteModule"]  # noqa: F822 - resolved by __getattr__


def __getattr__(name: str) -> Any:
    if name == "RemoteModule":
        from ....nn.parallel.remote_module import RemoteModule

        return RemoteModule
    raise AttributeError(f"module 'disttorch.distributed.nn.api.remote_module' has no attribute '{name}'")
