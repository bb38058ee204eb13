"""``torch.cuda`` as a CPU-only build of PyTorch answers it.

disttorch computes on the CPU only, so CUDA is never available: queries answer as PyTorch's
CPU build does (``is_available()`` is False, ``device_count()`` 0, memory counters 0,
seeding and cache calls do nothing) and the calls that need a GPU raise the same error type
as that build (mostly ``AssertionError: Torch not compiled with CUDA enabled``). Scripts
that pick ``"cuda" if torch.cuda.is_available() else "cpu"`` therefore run unchanged.
``torch.cuda.amp`` (GradScaler, autocast) lives in its own module.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from .._legacy_types import cuda_types as _cuda_types
from .._no_device import HINT, no_cuda
from .._tensor import device as _device
from . import amp

__all__ = [
    "amp",
    "CUDAGraph",
    "Event",
    "Stream",
    "StreamContext",
    "current_device",
    "current_stream",
    "default_generators",
    "default_stream",
    "device",
    "device_count",
    "device_of",
    "empty_cache",
    "get_arch_list",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_rng_state",
    "graph",
    "get_rng_state_all",
    "init",
    "initial_seed",
    "ipc_collect",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
    "seed",
    "seed_all",
    "set_device",
    "set_rng_state",
    "set_rng_state_all",
    "stream",
    "synchronize",
]

default_generators: tuple = ()
globals().update(_cuda_types)  # torch.cuda.FloatTensor, ...: raise TypeError when called (no CUDA)


def is_available() -> bool:
    """False: disttorch has no CUDA (as a CPU build of PyTorch)."""
    return False


def is_initialized() -> bool:
    """False: CUDA is never initialised."""
    return False


def device_count() -> int:
    """0: no CUDA device."""
    return 0


def _index(dev: Any) -> int:
    """The CUDA index of ``dev`` (int, 'cuda:N', device); ValueError for another device type."""
    if isinstance(dev, int) and not isinstance(dev, bool):
        return dev
    d = _device(dev)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return -1 if d.index is None else d.index


def set_device(device: Any) -> None:
    """Raises AttributeError as the CPU build does (a negative index is a no-op there too)."""
    if device is None or _index(device) < 0:
        return
    raise AttributeError("torch.cuda.set_device: no CUDA runtime" + HINT)


def reset_peak_memory_stats(device: Any = None) -> None:
    """Raises AttributeError as the CPU build does (no CUDA allocator)."""
    raise AttributeError("torch.cuda.reset_peak_memory_stats: no CUDA allocator" + HINT)


class device(contextlib.ContextDecorator):
    """``with torch.cuda.device(i):``: a no-op for ``None`` or a negative index; entering
    with a real index raises RuntimeError (no CUDA), as the CPU build does."""

    def __init__(self, device: Any) -> None:
        self.idx = -1 if device is None else _index(device)

    def __enter__(self) -> device:  # noqa: PYI034
        if self.idx >= 0:
            raise RuntimeError("PyTorch was compiled without CUDA support" + HINT)
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class device_of(device):
    """``with torch.cuda.device_of(tensor):``: nothing to select for a CPU tensor."""

    def __init__(self, obj: Any) -> None:
        self.idx = -1


def _raises(doc: str):
    def fn(*args: Any, **kwargs: Any) -> Any:
        no_cuda()

    fn.__doc__ = doc + " Raises AssertionError: disttorch has no CUDA (as the CPU build)."
    return fn


init = _raises("Initialise CUDA.")
current_device = _raises("Index of the current CUDA device.")
synchronize = _raises("Wait for the CUDA device.")
get_rng_state = _raises("The CUDA generator state.")
set_rng_state = _raises("Set the CUDA generator state.")
initial_seed = _raises("The CUDA generator's initial seed.")
mem_get_info = _raises("Free and total device memory.")
get_device_name = _raises("The CUDA device's name.")
get_device_properties = _raises("The CUDA device's properties.")
get_device_capability = _raises("The CUDA device's compute capability.")
current_stream = _raises("The current CUDA stream.")
default_stream = _raises("The default CUDA stream.")
ipc_collect = _raises("Free CUDA IPC memory.")


def manual_seed(seed: int) -> None:
    """Seed the CUDA generators: nothing to seed, silently ignored (as the CPU build)."""


def manual_seed_all(seed: int) -> None:
    """Seed every CUDA generator: silently ignored (as the CPU build)."""


def seed() -> None:
    """Seed the CUDA generator randomly: silently ignored (as the CPU build)."""


def seed_all() -> None:
    """Seed every CUDA generator randomly: silently ignored (as the CPU build)."""


def get_rng_state_all() -> list:
    """The states of all CUDA generators: ``[]`` (there are none)."""
    return []


def set_rng_state_all(new_states: Any) -> None:
    """Set the states of all CUDA generators: there are none."""


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: no CUDA device (CPU bfloat16 is a matter of ``torch.bfloat16`` itself)."""
    return False


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


def memory_stats(device: Any = None) -> OrderedDict[str, Any]:
    """An empty ordered dict: no CUDA allocator."""
    return OrderedDict()


def get_arch_list() -> list:
    """``[]``: no CUDA architectures."""
    return []


class Stream:
    """``torch.cuda.Stream``: raises RuntimeError (as the CPU build: it needs CUDA)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("torch.cuda.Stream requires CUDA support" + HINT)


class Event:
    """``torch.cuda.Event``: raises RuntimeError (as the CPU build: it needs CUDA)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("torch.cuda.Event requires CUDA support" + HINT)


class CUDAGraph:
    """``torch.cuda.CUDAGraph``: a name for type hints; making one raises RuntimeError (as the
    CPU build, whose class is a stand-in without CUDA)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("Tried to instantiate dummy base class CUDAGraph" + HINT)


class graph:
    """``with torch.cuda.graph(g):`` captures CUDA work; making one raises RuntimeError, as the
    CPU build does when it makes the capture stream."""

    def __init__(
        self, cuda_graph: Any, pool: Any = None, stream: Any = None, capture_error_mode: str = "global"
    ) -> None:
        Stream()


class StreamContext:
    """``torch.cuda.StreamContext(stream)``: selects nothing on entry or exit (as the CPU build,
    where no CUDA device is current)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


@contextlib.contextmanager
def stream(stream: Any) -> Iterator[None]:
    """``with torch.cuda.stream(None):`` does nothing (as the CPU build for ``None``)."""
    if stream is not None:
        no_cuda()
    yield
