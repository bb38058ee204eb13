"""``torch.distributed.rpc.functions``: ``async_execution``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["async_execution", "is_async_execution"]

_MARK = "_wrapped_async_rpc_function"


def async_execution(fn: Callable) -> Callable:
    """Mark ``fn`` as returning a ``torch.futures.Future`` whose value is the RPC's result.

    The callee then answers when that future completes, without holding one of its worker
    threads meanwhile (a function that waits for other calls to arrive, e.g. a batching
    parameter server, would otherwise use up the threads). Stack it under
    ``@staticmethod``/``@classmethod``, as in PyTorch.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    setattr(wrapper, _MARK, fn)
    return wrapper


def is_async_execution(fn: Any) -> bool:
    """Whether ``fn`` (a function or a bound method) was decorated by :func:`async_execution`."""
    return getattr(fn, _MARK, None) is not None
