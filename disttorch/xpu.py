"""``torch.xpu`` (Intel GPUs) as a CPU-only build answers it: not available.

``is_available()`` is False, ``device_count()`` 0, seeding and ``empty_cache`` do nothing;
calls that need a device raise ``AssertionError: Torch not compiled with XPU enabled``, as
that build does.
"""

from __future__ import annotations

from typing import Any

from ._no_device import no_xpu

__all__ = [
    "current_device",
    "device_count",
    "empty_cache",
    "get_device_name",
    "get_device_properties",
    "is_available",
    "manual_seed",
    "manual_seed_all",
    "memory_allocated",
    "seed",
    "seed_all",
    "set_device",
    "synchronize",
]


def is_available() -> bool:
    """False: no XPU device."""
    return False


def device_count() -> int:
    """0: no XPU device."""
    return 0


def manual_seed(seed: int) -> None:
    """Seed the XPU generator: silently ignored (as the CPU build)."""


def manual_seed_all(seed: int) -> None:
    """Seed every XPU generator: silently ignored (as the CPU build)."""


def seed() -> None:
    """Seed the XPU generator randomly: silently ignored (as the CPU build)."""


def seed_all() -> None:
    """Seed every XPU generator randomly: silently ignored (as the CPU build)."""


def empty_cache() -> None:
    """Release cached XPU memory: there is none."""


def memory_allocated(device: Any = None) -> int:
    """0: no XPU memory."""
    return 0


def _raises(doc: str):
    def fn(*args: Any, **kwargs: Any) -> Any:
        no_xpu()

    fn.__doc__ = doc + " Raises AssertionError: no XPU (as the CPU build)."
    return fn


synchronize = _raises("Wait for the XPU device.")
current_device = _raises("Index of the current XPU device.")
set_device = _raises("Select the XPU device.")
get_device_name = _raises("The XPU device's name.")
get_device_properties = _raises("The XPU device's properties.")
