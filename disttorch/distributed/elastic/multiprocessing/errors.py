"""``torch.distributed.elastic.multiprocessing.errors``: ``@record`` on a worker's entry point.

In PyTorch, ``@record`` writes an uncaught exception of the decorated function to the error
file the elastic agent gave the worker, so that ``torchrun`` can name the root cause. A
worker started by ``disttorch-launch`` already does that for any uncaught exception (its
bootstrap writes ``DISTTORCH_ERROR_FILE``, see ``disttorch._error_file``, with the line of the
user's code that raised, and the launcher's summary leads with it), so here ``@record`` only
keeps PyTorch's other rule: a ``SystemExit`` with code 0 inside the function returns None
instead of ending the process. Any other exception passes through unchanged.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["record"]

_R = TypeVar("_R")


def record(fn: Callable[..., _R], error_handler: Any = None) -> Callable[..., _R | None]:
    """Decorate a worker's top-level function (``@record def main(): ...``): it runs as is,
    its uncaught exceptions reach the launcher's error report, and ``sys.exit(0)`` inside it
    returns None. ``error_handler`` is accepted for PyTorch's signature and not used."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> _R | None:
        try:
            return fn(*args, **kwargs)
        except SystemExit as stop:
            if stop.code == 0:
                return None
            raise

    return wrapper
