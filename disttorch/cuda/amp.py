"""``torch.cuda.amp``: the deprecated CUDA spellings of autocast, GradScaler and
custom_fwd/custom_bwd. On this CPU-only build they warn as PyTorch's CPU build does:
autocast and GradScaler disable themselves, so code written for a GPU runs unchanged
in full precision."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from .. import _dtype
from ..amp import GradScaler as _GradScaler
from ..amp import autocast as _autocast
from ..amp import custom_bwd as _custom_bwd
from ..amp import custom_fwd as _custom_fwd

__all__ = ["GradScaler", "amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd"]


def amp_definitely_not_available() -> bool:
    """True: there is no CUDA device."""
    return True


class autocast(_autocast):
    """``disttorch.cuda.amp.autocast(args...)``: ``disttorch.amp.autocast('cuda', args...)``,
    which warns and disables itself here."""

    def __init__(
        self, enabled: bool = True, dtype: _dtype.dtype = _dtype.float16, cache_enabled: bool = True
    ) -> None:
        warnings.warn(
            "`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``disttorch.cuda.amp.GradScaler(args...)``: ``disttorch.amp.GradScaler('cuda', args...)``,
    which warns and disables itself here (every method passes through)."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
            "`torch.amp.GradScaler('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


def custom_fwd(fwd: Callable | None = None, *, cast_inputs: _dtype.dtype | None = None) -> Callable:
    """``disttorch.amp.custom_fwd(device_type='cuda')`` (deprecated spelling)."""
    warnings.warn(
        "`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
        "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return _custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd: Callable | None = None) -> Any:
    """``disttorch.amp.custom_bwd(device_type='cuda')`` (deprecated spelling)."""
    warnings.warn(
        "`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
        "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return _custom_bwd(bwd, device_type="cuda")
