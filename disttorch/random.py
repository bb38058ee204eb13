"""``torch.random``: the default generator's seed and state, and ``fork_rng``."""

import contextlib
from collections.abc import Iterator as _Iterator
from typing import Any as _Any

from ._random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = [
    "Generator",
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
    "thread_safe_generator",
]


@contextlib.contextmanager
def fork_rng(
    devices: _Any = None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str = "cuda",
) -> _Iterator[None]:
    """Run the block with the CPU random state saved on entry and restored on exit, so random
    draws inside it do not change the draws after it. ``devices`` are accelerator indices
    (none here)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def thread_safe_generator() -> "Generator | None":
    """The generator a transform should draw from to be safe in a DataLoader worker thread:
    ``None`` (the default generator) here, where workers are processes, each with its own."""
    return None
