"""``torch.random``: the default generator's seed and state, and ``fork_rng``."""

import contextlib
from collections.abc import Iterator as _Iterator
from typing import Any as _Any

from ._random import default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = [
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
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
