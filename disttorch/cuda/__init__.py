"""``torch.cuda`` as a CPU-only build of PyTorch answers it.

disttorch computes on the CPU only, so CUDA is never available: queries answer as PyTorch's
CPU build does (``is_available()`` is False, ``device_count()`` 0, memory counters 0,
seeding and cache calls do nothing) and the calls that need a GPU raise the same error type
as that build (mostly ``AssertionError: Torch not compiled with CUDA enabled``). Scripts
that pick ``"cuda" if torch.cuda.is_available() else "cpu"`` therefore run unchanged.
``torch.cuda.amp`` (GradScaler, autocast) and ``torch.cuda.memory`` (allocator queries) live
in their own modules.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, NoReturn

from .._legacy_types import cuda_types as _cuda_types
from .._no_device import HINT, no_cuda
from .._streams import OutOfMemoryError
from .._tensor import device as _device
from . import amp, memory
from .memory import *  # noqa: F403 (torch.cuda re-exports its memory queries)
from .memory import __all__ as _memory_names

__all__ = [
    *_memory_names,
    "amp",
    "memory",
    "CudaError",
    "OutOfMemoryError",
    "clock_rate",
    "can_device_access_peer",
    "current_blas_handle",
    "is_current_stream_capturing",
    "set_stream",
    "device_memory_used",
    "get_gencode_flags",
    "get_sync_debug_mode",
    "has_half",
    "has_magma",
    "is_tf32_supported",
    "memory_usage",
    "power_draw",
    "set_sync_debug_mode",
    "temperature",
    "utilization",
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
    "seed",
    "seed_all",
    "set_device",
    "set_rng_state",
    "set_rng_state_all",
    "stream",
    "synchronize",
]

default_generators: tuple = ()
has_half = True
has_magma = False
globals().update(_cuda_types)  # torch.cuda.FloatTensor, ...: raise TypeError when called (no CUDA)


def is_available() -> bool:
    """False: disttorch has no CUDA (as a CPU build of PyTorch)."""
    return False


def is_initialized() -> bool:
    """False: CUDA is never initialised."""
    return _initialized


_initialized = False  # PyTorch's module flag, which libraries read directly (reversible layers)


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
get_sync_debug_mode = _raises("The CUDA synchronisation debug mode.")
set_sync_debug_mode = _raises("Set the CUDA synchronisation debug mode.")
current_blas_handle = _raises("The cuBLAS handle of the current stream.")
can_device_access_peer = _raises("Whether one CUDA device can reach another's memory.")


def is_current_stream_capturing() -> bool:
    """Raises RuntimeError as the CPU build does (its capture query is a stand-in)."""
    raise RuntimeError("Tried to instantiate dummy base class _cuda_isCurrentStreamCapturing" + HINT)


def set_stream(stream: Any) -> None:
    """Make ``stream`` current: ``None`` does nothing; a stream needs CUDA."""
    if stream is not None:
        no_cuda()


set_rng_state = _raises("Set the CUDA generator state.")
initial_seed = _raises("The CUDA generator's initial seed.")
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


class CudaError(RuntimeError):
    """A CUDA runtime error (never raised: disttorch has no CUDA)."""


def _no_nvml(*args: Any, **kwargs: Any) -> NoReturn:
    """Raises ModuleNotFoundError as the CPU build does without NVML (``nvidia-ml-py``)."""
    raise ModuleNotFoundError("nvidia-ml-py does not seem to be installed or it can't be imported.")


utilization = memory_usage = temperature = power_draw = clock_rate = device_memory_used = _no_nvml


def is_tf32_supported() -> bool:
    """False: no CUDA device."""
    return False


def get_gencode_flags() -> str:
    """``''``: built for no CUDA architecture."""
    return ""


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: no CUDA device (CPU bfloat16 is a matter of ``torch.bfloat16`` itself)."""
    return False


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


# last: random takes the functions defined above
from . import nvtx, random  # noqa: E402
