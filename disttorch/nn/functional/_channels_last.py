"""``keeps_channels_last``: the layers whose output keeps a channels-last input's layout on
PyTorch's CPU build (convolutions, pooling, batch and group norm, interpolation, padding, dropout): a
channels-last ``(N, C, H, W)`` input gives a channels-last output, so a model converted
with ``model.to(memory_format=torch.channels_last)`` stays in NHWC from layer to layer."""

from __future__ import annotations

import functools
from typing import Any, Callable

from ..._memory_format import contiguous_format, in_format, suggest_memory_format
from ..._tensor import Tensor

__all__ = ["keeps_channels_last"]


def _relayout(out: Any, fmt: Any, ndim: int) -> Any:
    if isinstance(out, tuple):
        return (
            type(out)(*(_relayout(o, fmt, ndim) for o in out))
            if hasattr(out, "_fields")
            else tuple(_relayout(o, fmt, ndim) for o in out)
        )
    if isinstance(out, Tensor) and out._data.ndim == ndim:
        out._data = in_format(out._data, fmt)  # a fresh result: only its layout changes
    return out


def keeps_channels_last(fn: Callable) -> Callable:
    """Decorate a layer function so that its result is laid out channels-last when its
    input (first argument) or its weight (second argument, for convolutions) is."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        for a in args[:2]:
            if isinstance(a, Tensor) and a._data.ndim in (4, 5):
                fmt = suggest_memory_format(a._data)
                if fmt is not contiguous_format:
                    return _relayout(out, fmt, a._data.ndim)
        return out

    return wrapper
