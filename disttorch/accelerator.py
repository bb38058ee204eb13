"""``torch.accelerator`` as a CPU-only build of PyTorch answers it: no accelerator.

``is_available()`` is False, ``current_accelerator()`` None and ``device_count()`` 0, so
``device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else
torch.device("cpu")`` picks the CPU; functions that need a device raise RuntimeError
("Cannot access accelerator device when none is available."), as that build does.
"""

from __future__ import annotations

from typing import Any

from ._no_device import no_accelerator
from ._tensor import device as _device

__all__ = [
    "get_device_module",
    "current_accelerator",
    "current_device_idx",
    "current_device_index",
    "current_stream",
    "device_count",
    "device_index",
    "empty_cache",
    "get_device_capability",
    "get_memory_info",
    "is_available",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "set_device_idx",
    "set_device_index",
    "set_stream",
    "synchronize",
]


def get_device_module(device: Any = None) -> Any:
    """The ``torch.<type>`` module of ``device`` (a device, its type string, or None for the
    current accelerator, here the CPU): ``get_device_module("cuda")`` is ``torch.cuda``."""
    import importlib

    kind = device.type if isinstance(device, _device) else (str(device).split(":")[0] if device else "cpu")
    if kind not in ("cpu", "cuda", "mps", "xpu"):
        raise RuntimeError(
            f"Device '{kind}' does not have a corresponding module registered as 'torch.{kind}'."
        )
    return importlib.import_module(f"disttorch.{kind}")


def is_available() -> bool:
    """False: disttorch computes on the CPU only."""
    return False


def current_accelerator(check_available: bool = False) -> _device | None:
    """None: there is no accelerator."""
    return None


def device_count() -> int:
    """0: no accelerator device."""
    return 0


def _raises(doc: str):
    def fn(*args: Any, **kwargs: Any) -> Any:
        no_accelerator()

    fn.__doc__ = doc + " Raises RuntimeError: there is no accelerator (as the CPU build)."
    return fn


current_device_index = _raises("Index of the current accelerator device.")
current_device_idx = current_device_index
set_device_index = _raises("Select the accelerator device.")
set_device_idx = set_device_index
synchronize = _raises("Wait for the accelerator.")
current_stream = _raises("The accelerator's current stream.")
set_stream = _raises("Set the accelerator's current stream.")
empty_cache = _raises("Release the accelerator's cached memory.")
memory_allocated = _raises("Accelerator memory in use.")
max_memory_allocated = _raises("Peak accelerator memory in use.")
memory_reserved = _raises("Accelerator memory reserved.")
max_memory_reserved = _raises("Peak accelerator memory reserved.")
memory_stats = _raises("Accelerator allocator statistics.")
reset_peak_memory_stats = _raises("Reset the accelerator's peak memory counters.")
reset_accumulated_memory_stats = _raises("Reset the accelerator's memory counters.")
get_memory_info = _raises("Free and total accelerator memory.")
get_device_capability = _raises("The accelerator's capabilities.")


class device_index:
    """``with torch.accelerator.device_index(i):``: a no-op for ``None``; any index raises
    RuntimeError on entry (no accelerator)."""

    def __init__(self, device: int | None, /) -> None:
        self.idx = device

    def __enter__(self) -> None:
        if self.idx is not None:
            no_accelerator()

    def __exit__(self, *exc: object) -> None:
        return None
