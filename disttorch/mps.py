"""``torch.mps`` (Apple GPUs) as a CPU-only build answers it: not available.

``is_available()`` is False and ``device_count()`` 0; ``manual_seed`` is ignored; calls that
need the MPS backend raise RuntimeError, as that build does.
"""

from __future__ import annotations

from typing import Any

from ._no_device import no_mps

__all__ = [
    "current_allocated_memory",
    "device_count",
    "driver_allocated_memory",
    "empty_cache",
    "get_rng_state",
    "is_available",
    "manual_seed",
    "recommended_max_memory",
    "seed",
    "set_per_process_memory_fraction",
    "set_rng_state",
    "synchronize",
]


def is_available() -> bool:
    """False: no MPS device."""
    return False


def device_count() -> int:
    """0: no MPS device."""
    return 0


def manual_seed(seed: int) -> None:
    """Seed the MPS generator: silently ignored (as the CPU build)."""


def _raises(what: str, doc: str):
    def fn(*args: Any, **kwargs: Any) -> Any:
        no_mps(what)

    fn.__doc__ = doc + " Raises RuntimeError: no MPS backend (as the CPU build)."
    return fn


seed = _raises("getDefaultGenerator()", "Seed the MPS generator randomly.")
synchronize = _raises("deviceSynchronize()", "Wait for the MPS device.")
empty_cache = _raises("emptyCache()", "Release cached MPS memory.")
current_allocated_memory = _raises("getCurrentAllocatedMemory()", "MPS memory in use.")
driver_allocated_memory = _raises("getDriverAllocatedMemory()", "MPS driver memory.")
recommended_max_memory = _raises("getRecommendedMaxMemory()", "Recommended MPS working set.")
get_rng_state = _raises("getDefaultGenerator()", "The MPS generator state.")
set_rng_state = _raises("getDefaultGenerator()", "Set the MPS generator state.")
set_per_process_memory_fraction = _raises("setMemoryFraction()", "Limit MPS memory.")
