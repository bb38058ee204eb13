"""``disttorch.distributed.nn`` (mirrors ``torch.distributed.nn``): ``RemoteModule``.

The implementation lives in ``disttorch.nn.parallel.remote_module`` (``distributed`` never
imports ``nn``); this package re-exports it lazily, on first use of the name (PEP 562).
"""

from typing import Any

__all__ = ["RemoteModule"]


def __getattr__(name: str) -> Any:
    if name == "RemoteModule":
        from ...nn.parallel.remote_module import RemoteModule

        return RemoteModule
    raise AttributeError(f"module 'disttorch.distributed.nn' has no attribute '{name}'")
