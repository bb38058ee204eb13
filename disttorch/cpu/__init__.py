"""``torch.cpu``: the CPU device namespace (disttorch's only device) and ``cpu.amp``."""

from __future__ import annotations

from typing import Any

from . import amp

__all__ = [
    "amp",
    "current_device",
    "device_count",
    "is_available",
    "is_initialized",
    "set_device",
    "synchronize",
]


def is_available() -> bool:
    """Always True: the CPU is where disttorch computes."""
    return True


def is_initialized() -> bool:
    """Always True (nothing to initialise)."""
    return True


def device_count() -> int:
    """1: PyTorch counts the CPU as one device."""
    return 1


def current_device() -> str:
    """``'cpu'``."""
    return "cpu"


def set_device(device: Any) -> None:
    """Accepted and ignored, as PyTorch's ``torch.cpu.set_device``."""


def synchronize(device: Any = None) -> None:
    """Nothing to wait for: CPU ops finish before they return."""
