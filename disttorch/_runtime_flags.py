"""Process-wide runtime settings PyTorch programs set and read.

``set_float32_matmul_precision``/``get_float32_matmul_precision``,
``use_deterministic_algorithms``/``are_deterministic_algorithms_enabled``/
``is_deterministic_algorithms_warn_only_enabled`` and ``set_default_device``/
``get_default_device``, with PyTorch's argument checks. What they mean here: disttorch's
float32 matrix products are always computed in float32 (the "highest" precision; "high"
and "medium" allow TF32/bfloat16 on GPUs, which disttorch does not have), and its kernels
are deterministic whatever the flag says; the flags are kept and read back so programs
that set and check them behave as under PyTorch.
"""

from __future__ import annotations

import warnings
from typing import Any

from ._tensor import _default_devices, _global_default, _wants_meta
from ._tensor import device as _device

__all__ = [
    "are_deterministic_algorithms_enabled",
    "get_default_device",
    "get_float32_matmul_precision",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_default_device",
    "set_float32_matmul_precision",
    "use_deterministic_algorithms",
]

_PRECISIONS = ("highest", "high", "medium")
_state: dict[str, Any] = {"precision": "highest", "deterministic": False, "warn_only": False}


def set_float32_matmul_precision(precision: str) -> None:
    """Set the internal precision of float32 matrix products: ``"highest"`` (default),
    ``"high"`` or ``"medium"``. disttorch always computes them in float32 (the
    ``"highest"`` answer); the setting is kept for ``get_float32_matmul_precision`` and
    ``torch.backends.cuda.matmul.allow_tf32``. Another value warns and changes nothing,
    as in PyTorch."""
    if precision not in _PRECISIONS:
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
            "setFloat32MatmulPrecision call has no effect.",
            UserWarning,
            stacklevel=2,
        )
        return
    _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    """The value last set by ``set_float32_matmul_precision`` (``"highest"`` by default)."""
    return _state["precision"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms. Every disttorch kernel is deterministic already
    (same inputs, same bits), so no operation raises or warns under this flag; it is kept
    for ``are_deterministic_algorithms_enabled``."""
    if not isinstance(mode, bool):
        raise TypeError(
            f"use_deterministic_algorithms(): argument 'mode' (position 1) must be bool, "
            f"not {type(mode).__name__}"
        )
    if not isinstance(warn_only, bool):
        raise TypeError(
            f"use_deterministic_algorithms(): argument 'warn_only' must be bool, "
            f"not {type(warn_only).__name__}"
        )
    _state["deterministic"], _state["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in force."""
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True, warn_only=True)`` is in force."""
    return _state["warn_only"]


def set_default_device(device: Any) -> None:
    """Set the device factory functions create tensors on: the CPU (``"cpu"`` or None) or
    ``"meta"``; another device raises now, with the error the CPU build of PyTorch raises
    when the first tensor is created on it."""
    _global_default[0] = _device(device) if device is not None and _wants_meta(device) else None


def get_default_device() -> _device:
    """The device factory functions create tensors on (``with torch.device(...)`` blocks
    first, then ``set_default_device``'s)."""
    if _default_devices:
        return _default_devices[-1]
    return _global_default[0] or _device("cpu")
