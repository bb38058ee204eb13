"""Process-wide debugging switches PyTorch programs set and read: anomaly detection
(``set_anomaly_enabled``/``is_anomaly_enabled``/``is_anomaly_check_nan_enabled``, which the
autograd engine honours by checking every backward result for NaN), "warn always"
(``set_warn_always``), the deterministic debug mode (a view of
``use_deterministic_algorithms``) and ``set_flush_denormal``.
"""

from __future__ import annotations

from typing import Any

from . import _runtime_flags

__all__ = [
    "get_deterministic_debug_mode",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_warn_always_enabled",
    "set_anomaly_enabled",
    "set_deterministic_debug_mode",
    "set_flush_denormal",
    "set_warn_always",
]

_state: dict[str, bool] = {"anomaly": False, "check_nan": True, "warn_always": False}
_DEBUG_MODES = ("default", "warn", "error")


def _check_bool(fn: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{fn}(): argument '{name}' must be bool, not {type(value).__name__}")
    return value


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn autograd anomaly detection on or off. While on (and ``check_nan``), backward raises
    ``RuntimeError`` naming the function whose gradient contains NaN."""
    _state["anomaly"] = _check_bool("set_anomaly_enabled", "enabled", enabled)
    _state["check_nan"] = _check_bool("set_anomaly_enabled", "check_nan", check_nan)


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (``autograd.detect_anomaly`` or ``set_anomaly_enabled``)."""
    return _state["anomaly"]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks backward results for NaN (default True)."""
    return _state["check_nan"]


def set_warn_always(b: bool) -> None:
    """Make warnings PyTorch issues once per process issue every time (kept for
    ``is_warn_always_enabled``; disttorch's warnings go through :mod:`warnings`, whose filters
    decide repetition)."""
    _state["warn_always"] = _check_bool("set_warn_always", "b", b)


def is_warn_always_enabled() -> bool:
    """The value last given to ``set_warn_always`` (False by default)."""
    return _state["warn_always"]


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """``"default"``/0, ``"warn"``/1 or ``"error"``/2: the same as
    ``use_deterministic_algorithms(False)``, ``(True, warn_only=True)`` and ``(True)``."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                f"but got {debug_mode}"
            )
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif isinstance(debug_mode, bool) or not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode).__name__}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    _runtime_flags.use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """0 (default), 1 (warn) or 2 (error), from the deterministic-algorithms flags."""
    if not _runtime_flags.are_deterministic_algorithms_enabled():
        return 0
    return 1 if _runtime_flags.is_deterministic_algorithms_warn_only_enabled() else 2


def set_flush_denormal(mode: bool) -> bool:
    """Ask the CPU to flush denormal floats to zero. NumPy offers no control of the FPU's
    flush-to-zero bit, so this returns False (unsupported) for ``True`` and True for
    ``False`` (denormals are kept, which is the state asked for), as PyTorch does on a CPU
    without the SSE3 control."""
    _check_bool("set_flush_denormal", "mode", mode)
    return not mode
