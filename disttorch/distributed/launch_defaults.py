"""Questions a training script asks before it initialises the process group: which backend
suits a device, whether an elastic launcher (torchrun, disttorch-launch) started it, and
which rank it is on its machine."""

from __future__ import annotations

import os

from .._tensor import device as _device

__all__ = ["get_default_backend_for_device", "get_node_local_rank", "is_torchelastic_launched"]

#: PyTorch's map from device type to its default backend name ("gloo" selects disttorch's
#: ZeroMQ backend; the GPU backends are named for parity and cannot be initialised here)
DEFAULT_DEVICE_BACKEND_MAP = {"cpu": "gloo", "cuda": "nccl", "xpu": "xccl", "mps": "gloo"}


def get_default_backend_for_device(device: "str | _device") -> str:
    """The default backend name for ``device`` (``"cpu"`` -> ``"gloo"``, ``"cuda"`` ->
    ``"nccl"``, ...), as PyTorch answers; ValueError for a device with none registered."""
    kind = device.type if isinstance(device, _device) else _device(device).type
    backend = DEFAULT_DEVICE_BACKEND_MAP.get(kind)
    if backend is None:
        raise ValueError(f"Default backend not registered for device : {device}")
    return backend


def is_torchelastic_launched() -> bool:
    """Whether an elastic launcher started this process (``TORCHELASTIC_RUN_ID`` is set, as
    torchrun and disttorch-launch do)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """This process's rank on its machine: ``LOCAL_RANK`` (which torchrun and disttorch-launch
    set), else ``fallback_rank``; RuntimeError with neither."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
        "`get_node_local_rank` to work, assuming you are not running in a multi-device context "
        "and want the code to run locally instead."
    )
