"""``torch.cpu.amp``: the deprecated spellings of ``amp.autocast('cpu')`` and
``amp.GradScaler('cpu')`` (they warn as PyTorch's do, then work)."""

from __future__ import annotations

import warnings

from ... import _dtype
from ...amp import GradScaler as _GradScaler
from ...amp import autocast as _autocast

__all__ = ["GradScaler", "autocast"]


class autocast(_autocast):
    """``disttorch.cpu.amp.autocast(args...)``: ``disttorch.amp.autocast('cpu', args...)``."""

    def __init__(
        self, enabled: bool = True, dtype: _dtype.dtype = _dtype.bfloat16, cache_enabled: bool = True
    ) -> None:
        warnings.warn(
            "`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``disttorch.cpu.amp.GradScaler(args...)``: ``disttorch.amp.GradScaler('cpu', args...)``."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
            "`torch.amp.GradScaler('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
