"""Autocast state and the op decorator that applies it (``torch.autocast``'s dispatch).

The state is per thread, as in PyTorch: for each device type whether autocast is on and
its low-precision dtype, the weight-cast cache and the nesting depth. Only CPU autocast
changes what disttorch computes (there are no other devices); the other device types
keep their flags so that ``is_autocast_enabled('cuda')`` answers what was set.

An op that PyTorch's CPU autocast handles is decorated with :func:`autocast_op` and a
policy: ``"lower"`` (cast float32 tensor arguments to the autocast dtype: matmul, linear,
conv...), ``"fp32"`` (cast float16/bfloat16 arguments to float32: losses, prod, cdist...).
Inside the op autocast is suspended, as PyTorch excludes its autocast key, so the op's
own building blocks are not cast again; backward never autocasts. Casts are recorded
(``Tensor.to``), so gradients come back in the arguments' own dtype.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from .. import _dtype
from .._tensor import Tensor
from . import grad_mode

__all__ = [
    "set_autocast_gpu_dtype",
    "DEVICE_TYPES",
    "autocast_decrement_nesting",
    "autocast_increment_nesting",
    "autocast_op",
    "clear_autocast_cache",
    "get_autocast_cpu_dtype",
    "get_autocast_dtype",
    "get_autocast_gpu_dtype",
    "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled",
    "is_autocast_enabled",
    "set_autocast_cache_enabled",
    "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
]

# The device types PyTorch's autocast accepts here, with their default low dtype.
DEVICE_TYPES = {
    "cpu": "bfloat16",
    "cuda": "float16",
    "mps": "float16",
    "xpu": "bfloat16",
    "hpu": "bfloat16",
    "xla": "bfloat16",
    "ipu": "float16",
    "mtia": "float16",
    "maia": "float16",
    "privateuseone": "float16",
}


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled = dict.fromkeys(DEVICE_TYPES, False)
        self.dtypes = {k: getattr(_dtype, v) for k, v in DEVICE_TYPES.items()}
        self.cache_enabled = True
        self.nesting = 0
        self.cache: dict = {}
        self.suspended = 0  # > 0 inside an autocast op or a backward pass: ops do not cast
        self.active = None  # the CPU low dtype while CPU autocast applies to ops, else None

    def refresh(self) -> None:
        self.active = self.dtypes["cpu"] if self.enabled["cpu"] and not self.suspended else None


_state = _State()


def _device(device_type: str) -> str:
    if device_type not in DEVICE_TYPES:
        raise RuntimeError(
            f"unsupported autocast device_type '{device_type}': expected one of {', '.join(DEVICE_TYPES)}"
        )
    return device_type


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` (no argument: 'cuda', as PyTorch)."""
    return _state.enabled[_device(device_type or "cuda")]


def set_autocast_enabled(device_type: str, enabled: bool | None = None) -> None:
    """Turn autocast on or off for ``device_type`` (``set_autocast_enabled(True)``: cuda)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _state.enabled[_device(device_type)] = bool(enabled)
    _state.refresh()


def get_autocast_dtype(device_type: str) -> _dtype.dtype:
    """The low-precision dtype autocast uses on ``device_type``."""
    return _state.dtypes[_device(device_type)]


def set_autocast_dtype(device_type: str, dtype: _dtype.dtype) -> None:
    """Set the low-precision dtype autocast uses on ``device_type``."""
    _state.dtypes[_device(device_type)] = dtype
    _state.refresh()


def is_autocast_cpu_enabled() -> bool:
    """``is_autocast_enabled('cpu')`` (PyTorch's older name)."""
    return _state.enabled["cpu"]


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """``set_autocast_enabled('cpu', enabled)`` (PyTorch's older name)."""
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype() -> _dtype.dtype:
    """``get_autocast_dtype('cpu')`` (PyTorch's older name)."""
    return _state.dtypes["cpu"]


def set_autocast_cpu_dtype(dtype: _dtype.dtype) -> None:
    """``set_autocast_dtype('cpu', dtype)`` (PyTorch's older name)."""
    set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype: _dtype.dtype) -> None:
    """``set_autocast_dtype('cuda', dtype)`` (PyTorch's older name)."""
    set_autocast_dtype("cuda", dtype)


def get_autocast_gpu_dtype() -> _dtype.dtype:
    """``get_autocast_dtype('cuda')`` (PyTorch's older name)."""
    return _state.dtypes["cuda"]


def is_autocast_cache_enabled() -> bool:
    """Whether casts of weights (leaf tensors requiring grad) are cached inside autocast."""
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Turn the autocast weight-cast cache on or off."""
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Forget the cached casts (done when the outermost autocast region exits)."""
    _state.cache.clear()


def autocast_increment_nesting() -> int:
    """Enter an autocast region; returns the new depth."""
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    """Leave an autocast region; returns the new depth."""
    _state.nesting -= 1
    return _state.nesting


def _cast(x: Any, to: _dtype.dtype, lower: bool) -> Any:
    """``x`` cast to ``to`` if it is an eligible tensor (floating, not float64)."""
    if not isinstance(x, Tensor):
        return x
    d = x.dtype
    if not d.is_floating_point or d is _dtype.float64 or d is to:
        return x
    st = _state
    cacheable = lower and st.cache_enabled and x._rg and x.grad_fn is None and d is _dtype.float32
    if not cacheable:
        return x.to(to)
    key = (id(x), to.name, grad_mode._state[0])
    hit = st.cache.get(key)
    if hit is None:
        hit = st.cache[key] = (x, x.to(to))  # keeps x alive, so its id stays unique
    return hit[1]


def _promoted(args: tuple, low: _dtype.dtype) -> _dtype.dtype:
    """The dtype autocast's ``promote`` policy casts to (PyTorch's ``prioritize``): float32 if
    a float32 tensor comes before any floating tensor of a third type, else ``low``; float64
    tensors are left out; another floating type first raises PyTorch's error."""
    current = low
    for a in args:
        for t in a if isinstance(a, (list, tuple)) else (a,):
            if not isinstance(t, Tensor) or not t.dtype.is_floating_point or t.dtype is _dtype.float64:
                continue
            if current is _dtype.float32 or t.dtype is _dtype.float32:
                current = _dtype.float32
            elif t.dtype is not low:
                raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return current


def promoted_list(tensors: list) -> list:
    """``tensors`` as CPU autocast's ``promote`` policy hands them to ``cat`` or ``stack``
    (called only while it is active; cheaper on their path than :func:`autocast_op`)."""
    to = _promoted((tensors,), _state.active)
    return [_cast(t, to, False) for t in tensors]


def autocast_op(policy: str) -> Callable[[Callable], Callable]:
    """Decorate an op with its CPU autocast policy: ``"lower"``, ``"fp32"`` or ``"promote"``
    (floating tensors, in lists too, cast to the widest of float32 and the autocast type)."""
    if policy not in ("lower", "fp32", "promote"):
        raise ValueError(f"autocast policy must be 'lower', 'fp32' or 'promote', got {policy!r}")

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def op(*args: Any, **kwargs: Any) -> Any:
            st = _state
            low = st.active
            if low is None:
                return fn(*args, **kwargs)
            if policy == "promote":
                to = _promoted((*args, *kwargs.values()), low)
                args = tuple(
                    [_cast(t, to, False) for t in a] if isinstance(a, (list, tuple)) else a for a in args
                )
            else:
                to = low if policy == "lower" else _dtype.float32
            lower = policy == "lower"
            args = tuple(_cast(a, to, lower) for a in args)
            kwargs = {k: _cast(v, to, lower) for k, v in kwargs.items()}
            suspend()
            try:
                return fn(*args, **kwargs)
            finally:
                resume()

        op.autocast_policy = policy
        return op

    return decorate


def suspend() -> None:
    """Stop ops from autocasting until the matching :func:`resume` (the backward engine
    and autocast ops themselves use this; calls nest)."""
    _state.suspended += 1
    _state.active = None


def resume() -> None:
    """Undo one :func:`suspend`."""
    _state.suspended -= 1
    _state.refresh()
