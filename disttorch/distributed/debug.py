"""Debugging aids of ``torch.distributed``: the debug level (``TORCH_DISTRIBUTED_DEBUG``) and
:func:`breakpoint`, which stops one rank in ``pdb`` while the others wait for it."""

from __future__ import annotations

import enum
import os
import pdb
import sys
from datetime import timedelta

from .collectives import barrier
from .groups import _state, get_rank

__all__ = ["DebugLevel", "breakpoint", "get_debug_level", "set_debug_level", "set_debug_level_from_env"]

ENV_DEBUG = "TORCH_DISTRIBUTED_DEBUG"


class DebugLevel(enum.Enum):
    """How much the distributed layers check and log: ``OFF``, ``INFO`` or ``DETAIL``
    (``DETAIL`` also makes ``DeviceMesh`` check its mesh across ranks)."""

    OFF = 0
    INFO = 1
    DETAIL = 2

    def __int__(self) -> int:
        return self.value


_level: DebugLevel | None = None  # None: not read from the environment yet


def set_debug_level(level: DebugLevel) -> None:
    """Set the process's debug level."""
    global _level
    if not isinstance(level, DebugLevel):
        raise TypeError(f"set_debug_level(): expected a torch.distributed.DebugLevel, got {level!r}")
    _level = level


def set_debug_level_from_env() -> None:
    """Set the debug level from ``TORCH_DISTRIBUTED_DEBUG`` (``OFF``, ``INFO`` or ``DETAIL``,
    any case; unset means ``OFF``)."""
    value = os.environ.get(ENV_DEBUG, "OFF").upper()
    if value not in DebugLevel.__members__:
        raise ValueError(f"The value of {ENV_DEBUG} must be OFF, INFO, or DETAIL.")
    set_debug_level(DebugLevel[value])


def get_debug_level() -> DebugLevel:
    """The process's debug level (first read from ``TORCH_DISTRIBUTED_DEBUG``; PyTorch reads it
    when ``torch.distributed`` is imported, and a bad value fails that import)."""
    if _level is None:
        set_debug_level_from_env()
    return _level


class _StdinPdb(pdb.Pdb):
    """``pdb`` reading the terminal even where the process's stdin was redirected (a launched
    worker's is ``/dev/null``)."""

    def __init__(self) -> None:
        try:
            stdin = open("/dev/tty")  # noqa: SIM115 - lives as long as the debugger
        except OSError:
            stdin = sys.stdin
        super().__init__(stdin=stdin)


_skipped: dict[tuple[str, int], int] = {}


def breakpoint(rank: int = 0, skip: int = 0, timeout_s: float | None = 3600) -> None:  # noqa: A001
    """Stop global rank ``rank`` in ``pdb``; every other rank waits in a barrier until it
    continues. The first ``skip`` calls from the same line return at once. Every group's
    collective timeout becomes ``timeout_s`` seconds (as in PyTorch, for good), so that a
    long debugging session does not time the others out."""
    if skip > 0:
        caller = sys._getframe(1)
        key = (caller.f_code.co_filename, caller.f_lineno)
        _skipped[key] = _skipped.get(key, 0) + 1
        if _skipped[key] <= skip:
            return
    if timeout_s is not None:
        seconds = timedelta(seconds=timeout_s).total_seconds()
        for pg in _state.groups.values():
            pg.timeout = seconds
    if get_rank() == rank:
        debugger = _StdinPdb()
        debugger.message(
            f"\n!!! ATTENTION !!!\n\nType 'up' to get to the frame that called dist.breakpoint(rank={rank})\n"
        )
        debugger.set_trace()
    barrier()
