"""``autograd.detect_anomaly`` and ``autograd.set_detect_anomaly``: switch anomaly detection
on for a block or a function. While on, backward raises ``RuntimeError`` naming the backward
function that produced NaN (``torch.set_anomaly_enabled`` is the process-wide switch)."""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

from .. import _debug_flags

__all__ = ["detect_anomaly", "set_detect_anomaly"]


class set_detect_anomaly:
    """Set anomaly detection to ``mode`` (and NaN checking to ``check_nan``) at once; undone on
    leaving a ``with`` block."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._prev = (_debug_flags.is_anomaly_enabled(), _debug_flags.is_anomaly_check_nan_enabled())
        _debug_flags.set_anomaly_enabled(bool(mode), bool(check_nan))

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _debug_flags.set_anomaly_enabled(*self._prev)


class detect_anomaly:
    """Context manager and decorator enabling anomaly detection for its block."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = bool(check_nan)
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self._prev = (_debug_flags.is_anomaly_enabled(), _debug_flags.is_anomaly_check_nan_enabled())
        _debug_flags.set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc: Any) -> None:
        _debug_flags.set_anomaly_enabled(*self._prev)

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapper
