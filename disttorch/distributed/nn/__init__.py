"""``disttorch.distributed.nn`` (mirrors ``torch.distributed.nn``): the differentiable
collectives of :mod:`.functional` (``all_gather``, ``all_reduce``, ...) and ``RemoteModule``.

``RemoteModule``'s implementation lives in ``disttorch.nn.parallel.remote_module``
(``distributed`` never imports ``nn``); this package re-exports it lazily, on first use of the
name (PEP 562).
"""

from typing import Any

from . import functional
from .functional import (
    all_gather,
    all_reduce,
    all_to_all,
    all_to_all_single,
    broadcast,
    gather,
    reduce,
    reduce_scatter,
    scatter,
)

__all__ = ["RemoteModule", "functional", *functional.__all__]  # noqa: F822 - RemoteModule: __getattr__


def __getattr__(name: str) -> Any:
    if name == "RemoteModule":
        from ...nn.parallel.remote_module import RemoteModule

        return RemoteModule
    raise AttributeError(f"module 'disttorch.distributed.nn' has no attribute '{name}'")
