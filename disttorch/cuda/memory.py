"""``torch.cuda.memory``: the CUDA caching allocator's queries, as a CPU build answers them.

Counters are 0 and stats empty; calls that reach into the allocator raise AttributeError (the
CPU build's C module lacks them), those that need a device AssertionError; the renamed
``*_cached`` functions warn PyTorch's FutureWarning first.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any, NoReturn

from .._no_device import HINT, no_cuda

__all__ = [
    "caching_allocator_alloc",
    "caching_allocator_delete",
    "empty_cache",
    "get_allocator_backend",
    "get_per_process_memory_fraction",
    "host_memory_stats",
    "list_gpu_processes",
    "max_memory_allocated",
    "max_memory_cached",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_cached",
    "memory_reserved",
    "memory_snapshot",
    "memory_stats",
    "memory_stats_as_nested_dict",
    "memory_summary",
    "reset_accumulated_memory_stats",
    "reset_max_memory_allocated",
    "reset_max_memory_cached",
    "reset_peak_host_memory_stats",
    "reset_peak_memory_stats",
    "set_per_process_memory_fraction",
]


def _no_allocator(name: str) -> NoReturn:
    raise AttributeError(f"torch.cuda.{name}: no CUDA allocator" + HINT)


def empty_cache() -> None:
    """Release cached CUDA memory: there is none."""


def memory_allocated(device: Any = None) -> int:
    """0: no CUDA memory."""
    return 0


def max_memory_allocated(device: Any = None) -> int:
    """0: no CUDA memory."""
    return 0


def memory_reserved(device: Any = None) -> int:
    """0: no CUDA memory."""
    return 0


def max_memory_reserved(device: Any = None) -> int:
    """0: no CUDA memory."""
    return 0


def memory_cached(device: Any = None) -> int:
    """Renamed ``memory_reserved``: warns so, then 0."""
    warnings.warn(
        "`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`", FutureWarning, 2
    )
    return memory_reserved(device)


def max_memory_cached(device: Any = None) -> int:
    """Renamed ``max_memory_reserved``: warns so, then 0."""
    warnings.warn(
        "`torch.cuda.max_memory_cached` has been renamed to `torch.cuda.max_memory_reserved`",
        FutureWarning,
        2,
    )
    return max_memory_reserved(device)


def memory_stats(device: Any = None) -> OrderedDict[str, Any]:
    """An empty ordered dict: no CUDA allocator."""
    return OrderedDict()


def memory_stats_as_nested_dict(device: Any = None) -> dict[str, Any]:
    """An empty dict: no CUDA allocator."""
    return {}


def host_memory_stats() -> OrderedDict[str, Any]:
    """An empty ordered dict: no pinned-memory allocator."""
    return OrderedDict()


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """Raises KeyError, as the CPU build (its empty stats lack 'allocated_bytes.all.current')."""
    raise KeyError("allocated_bytes.all.current")


def list_gpu_processes(device: Any = None) -> str:
    """The CPU build's answer without NVML."""
    return "pynvml module not found, please install nvidia-ml-py"


def reset_peak_memory_stats(device: Any = None) -> None:
    """Raises AttributeError as the CPU build does (no CUDA allocator)."""
    _no_allocator("reset_peak_memory_stats")


def _warn_resets_all(name: str) -> None:
    warnings.warn(
        f"torch.cuda.{name} now calls torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
        FutureWarning,
        3,
    )


def reset_max_memory_allocated(device: Any = None) -> None:
    """Warns that it resets every peak (PyTorch's FutureWarning), then as ``reset_peak_memory_stats``."""
    _warn_resets_all("reset_max_memory_allocated")
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device: Any = None) -> None:
    """Warns that it resets every peak (PyTorch's FutureWarning), then as ``reset_peak_memory_stats``."""
    _warn_resets_all("reset_max_memory_cached")
    reset_peak_memory_stats(device)


def reset_peak_host_memory_stats() -> None:
    """Raises AttributeError as the CPU build does (no pinned-memory allocator)."""
    _no_allocator("reset_peak_host_memory_stats")


def reset_accumulated_memory_stats(device: Any = None) -> None:
    """Raises AttributeError as the CPU build does (no CUDA allocator)."""
    _no_allocator("reset_accumulated_memory_stats")


def memory_snapshot(mempool_id: Any = None, include_traces: bool = True) -> list:
    """Raises AttributeError as the CPU build does (no CUDA allocator)."""
    _no_allocator("memory_snapshot")


def _record_memory_history(enabled: Any = "all", *args: Any, **kwargs: Any) -> None:
    """Raises AttributeError as the CPU build does (no CUDA allocator to record)."""
    _no_allocator("memory._record_memory_history")


def _snapshot(device: Any = None, augment_with_fx_traces: bool = False) -> dict:
    """Raises AttributeError as the CPU build does (no CUDA allocator)."""
    _no_allocator("memory._snapshot")


def _dump_snapshot(filename: str = "dump_snapshot.pickle", augment_with_fx_traces: bool = False) -> None:
    """Raises AttributeError as the CPU build does (no CUDA allocator)."""
    _no_allocator("memory._dump_snapshot")


def get_allocator_backend() -> str:
    """Raises AttributeError as the CPU build does (no CUDA allocator)."""
    _no_allocator("get_allocator_backend")


def caching_allocator_delete(mem_ptr: int) -> None:
    """Raises AttributeError as the CPU build does (no CUDA allocator)."""
    _no_allocator("caching_allocator_delete")


def caching_allocator_alloc(size: int, device: Any = None, stream: Any = None) -> int:
    """Raises AssertionError as the CPU build does (no CUDA device)."""
    no_cuda()


def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    """Raises AssertionError as the CPU build does (no CUDA device)."""
    no_cuda()


def get_per_process_memory_fraction(device: Any = None) -> float:
    """Raises AssertionError as the CPU build does (no CUDA device)."""
    no_cuda()


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """Raises AssertionError as the CPU build does (no CUDA device)."""
    no_cuda()
