"""``torch.multiprocessing``: Python's ``multiprocessing`` with tensors in shared memory.

Everything of :mod:`multiprocessing` is here (``Process``, ``Queue``, ``Pool``,
``get_context``, ``set_start_method``, ...), plus :func:`spawn` / :func:`start_processes`.
Importing this module registers the tensor reductions (:mod:`.reductions`): a tensor put on
a queue or passed to a spawned ``Process`` arrives sharing memory with the sender's, so
``model.share_memory()`` followed by several processes training ``model`` (Hogwild)
updates one set of parameters. The sharing strategy is always file descriptors of
anonymous shared-memory files; ``set_sharing_strategy`` accepts PyTorch's two names.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing import *  # noqa: F403 - the standard module's API, as torch.multiprocessing

from .reductions import init_reductions
from .spawn import (
    ENV_VAR_PARALLEL_START,
    ProcessContext,
    ProcessException,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

__all__ = [
    *multiprocessing.__all__,  # noqa: PLE0604
    "spawn",
    "start_processes",
    "ProcessContext",
    "SpawnContext",
    "ENV_VAR_PARALLEL_START",
    "ProcessException",
    "ProcessRaisedException",
    "ProcessExitedException",
    "get_sharing_strategy",
    "set_sharing_strategy",
    "get_all_sharing_strategies",
]

_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = "file_descriptor"


def get_all_sharing_strategies() -> set[str]:
    """The sharing strategy names accepted: ``{'file_descriptor', 'file_system'}``."""
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    """The strategy last set (``'file_descriptor'`` by default). Both strategies send a
    descriptor of an anonymous shared-memory file, which leaves no file behind."""
    return _strategy


def set_sharing_strategy(new_strategy: str) -> None:
    """Choose how tensors are shared: ``'file_descriptor'`` or ``'file_system'``."""
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise ValueError(f"unknown sharing strategy {new_strategy!r}: expected one of {sorted(_STRATEGIES)}")
    _strategy = new_strategy


init_reductions()
