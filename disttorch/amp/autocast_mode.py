"""``autocast``: a context manager and decorator under which the ops PyTorch's CPU
autocast lowers (matmul, mm, bmm, addmm, einsum, linear, conv*, conv_transpose*, prelu,
scaled_dot_product_attention) compute in ``dtype`` (bfloat16 or float16) and the ops
it keeps in float32 (the losses, prod, trace) compute in float32; every other op runs
in its inputs' dtype. Parameters stay in their own dtype and so do their gradients.

On this CPU-only build ``autocast('cuda')`` warns and disables itself, as PyTorch's CPU
build does; the flags of the other device types are kept but change nothing.
"""

from __future__ import annotations

import collections.abc
import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd import autocast_state as _autocast
from ..autograd.autocast_state import get_autocast_dtype, is_autocast_enabled

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]

_CPU_DTYPES = ("bfloat16", "float16")


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast accepts ``device_type`` (PyTorch's list of device types)."""
    return device_type in _autocast.DEVICE_TYPES


class autocast:
    """Run the ops in the ``with`` block (or the decorated function) in mixed precision.

    Args:
        device_type: ``'cpu'`` (the device disttorch computes on), or ``'cuda'``, ``'mps'``,
            ... (accepted; 'cuda' warns and disables itself, as on PyTorch's CPU build).
        dtype: the low-precision dtype; default ``get_autocast_dtype(device_type)``
            (bfloat16 on CPU). CPU autocast supports bfloat16 and float16.
        enabled: ``False`` runs the block with autocast off.
        cache_enabled: cache the low-precision casts of weights inside the region
            (default ``is_autocast_cache_enabled()``).

    Example::

        with disttorch.autocast(device_type="cpu", dtype=disttorch.bfloat16):
            loss = loss_fn(model(x), y)   # matmuls in bfloat16, the loss in float32
        loss.backward()                   # gradients in the parameters' dtype
    """

    def __init__(
        self,
        device_type: str,
        dtype: _dtype.dtype | None = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")  # noqa: TRY004 - as PyTorch
        if device_type not in _autocast.DEVICE_TYPES:
            raise RuntimeError(
                f"autocast: unsupported device_type '{device_type}'; expected one of "
                f"{', '.join(_autocast.DEVICE_TYPES)}"
            )
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        if not isinstance(self.fast_dtype, _dtype.dtype):
            raise TypeError(f"autocast: dtype must be a disttorch.dtype, got {type(dtype).__name__}")
        self._cache_enabled = (
            _autocast.is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        )
        enabled = bool(enabled)
        if enabled and device_type == "cuda":
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            enabled = False
        if enabled and device_type == "cpu" and self.fast_dtype.name not in _CPU_DTYPES:
            warnings.warn(
                "In CPU autocast, but the target dtype is not supported. Disabling "
                "autocast.\nCPU Autocast only supports dtypes of disttorch.bfloat16, "
                "disttorch.float16 currently.",
                stacklevel=2,
            )
            enabled = False
        if enabled and self.fast_dtype is _dtype.bfloat16:
            self.fast_dtype.numpy  # noqa: B018 - load ml_dtypes now: a clear error if it is missing
        self._enabled = enabled

    def __enter__(self) -> autocast:  # noqa: PYI034
        st = _autocast._state
        self._prev = (st.enabled[self.device], st.dtypes[self.device], st.cache_enabled)
        _autocast.autocast_increment_nesting()
        st.enabled[self.device] = self._enabled
        st.dtypes[self.device] = self.fast_dtype
        st.cache_enabled = self._cache_enabled
        st.refresh()
        return self

    def __exit__(self, *exc: object) -> None:
        st = _autocast._state
        if _autocast.autocast_decrement_nesting() == 0:
            _autocast.clear_autocast_cache()
        st.enabled[self.device], st.dtypes[self.device], st.cache_enabled = self._prev
        st.refresh()

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def decorated(*args: Any, **kwargs: Any) -> Any:
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)

        return decorated


def _cast(value: Any, device_type: str, dtype: _dtype.dtype) -> Any:
    """``value`` with every float16/bfloat16/float32 tensor on ``device_type`` in it cast to
    ``dtype`` (float64 ones are left alone), through mappings (keys too), lists, tuples and
    other iterables (a generator for those); strings, bytes and NumPy arrays pass through.
    PyTorch's ``torch.amp.autocast_mode._cast``, which ``custom_fwd(cast_inputs=)`` and
    models' own autocast helpers call."""
    if isinstance(value, Tensor):
        eligible = (
            value.is_floating_point() and value.device.type == device_type and value.dtype != _dtype.float64
        )
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        cast = (_cast(v, device_type, dtype) for v in value)
        return type(value)(cast) if isinstance(value, (list, tuple)) else cast
    return value


def custom_fwd(
    fwd: Callable | None = None, *, device_type: str, cast_inputs: _dtype.dtype | None = None
) -> Callable:
    """Decorate the ``forward`` of a custom ``autograd.Function`` for autocast.

    With ``cast_inputs``, inside an autocast region the floating tensor arguments are cast
    to it and ``forward`` runs with autocast off; without it, ``forward`` runs in the
    current autocast state (and :func:`custom_bwd` replays that state in backward).
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")  # noqa: TRY004
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        ctx._dtype = get_autocast_dtype(device_type)
        on = is_autocast_enabled(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = on
            return fwd(ctx, *args, **kwargs)
        ctx._fwd_used_autocast = False
        if not on:
            return fwd(ctx, *args, **kwargs)
        with autocast(device_type, enabled=False):
            return fwd(ctx, *_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))

    return decorate_fwd


def custom_bwd(bwd: Callable | None = None, *, device_type: str) -> Callable:
    """Decorate the ``backward`` of a custom ``autograd.Function``: it runs in the autocast
    state its ``forward`` (decorated with :func:`custom_fwd`) ran in."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")  # noqa: TRY004
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        with autocast(device_type, dtype=ctx._dtype, enabled=ctx._fwd_used_autocast):
            return bwd(ctx, *args, **kwargs)

    return decorate_bwd
