"""``torch.mtia`` (Meta's training and inference accelerator) as a CPU-only build answers it:
not available (accelerate's profiler settings ask ``torch.mtia.is_available()``).

``is_available()`` and ``is_initialized()`` are False, ``device_count()`` 0,
``memory_stats()`` empty; calls that need a device raise PyTorch's ``RuntimeError``.
"""

from __future__ import annotations

from typing import Any

from ._no_device import no_mtia

__all__ = [
    "current_device",
    "device_count",
    "empty_cache",
    "get_device_capability",
    "is_available",
    "is_initialized",
    "memory_stats",
    "synchronize",
]


def is_available() -> bool:
    """False: no MTIA device."""
    return False


def is_initialized() -> bool:
    """False: there is no MTIA backend to initialise."""
    return False


def device_count() -> int:
    """0: no MTIA device."""
    return 0


def memory_stats(device: Any = None) -> dict:
    """Empty: no MTIA memory."""
    return {}


def current_device() -> int:
    """Raises RuntimeError: no MTIA backend (as the CPU build)."""
    no_mtia("getCurrentDevice()")


def synchronize(device: Any = None) -> None:
    """Raises RuntimeError: no MTIA backend (as the CPU build)."""
    no_mtia("getCurrentDevice()")


def get_device_capability(device: Any = None) -> tuple:
    """Raises RuntimeError: no MTIA backend (as the CPU build)."""
    no_mtia("getCurrentDevice()")


def empty_cache() -> None:
    """Raises RuntimeError: no MTIA backend (as the CPU build)."""
    no_mtia("emptyCache()")
