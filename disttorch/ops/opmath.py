"""16-bit floats in ops that PyTorch fuses into one CPU kernel (``addmm``, ``addcmul``,
``lerp``, ...): PyTorch computes them in float32 (its "opmath" type) and rounds the result
to float16/bfloat16 once. Ours are composed of several ops, each of which would round; the
helpers here compute them in float32 and round once, as PyTorch's kernels do."""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from .. import _dtype
from .._layout import strided
from .._tensor import Tensor

__all__ = [
    "computed_in_float32",
    "is_low",
    "low_result",
    "opmath_array",
    "round_scalar_tail",
    "scalar_of",
]

_F16 = np.dtype(np.float16)


def is_low(dt: np.dtype) -> bool:
    """True for float16 and bfloat16 NumPy dtypes."""
    bf = _dtype.bf16_numpy[0]
    return dt == _F16 or (bf is not None and dt == bf)


def opmath_array(x: Any) -> Any:
    """A float16/bfloat16 array (or a tensor's array) as float32; anything else unchanged."""
    a = x._data if isinstance(x, Tensor) else x
    return a.astype(np.float32) if isinstance(a, np.ndarray) and is_low(a.dtype) else a


def low_result(*args: Any) -> Any:
    """The float16/bfloat16 dtype the dense tensors among ``args`` promote to, or None
    (None too when a sparse tensor takes part: sparse products keep their own rules)."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    if any(t.layout is not strided for t in tensors):
        return None
    if not any(is_low(t._data.dtype) for t in tensors):
        return None
    rt = _dtype.arrays_result_type([t._data for t in tensors])
    return next(t.dtype for t in tensors if t._data.dtype == rt) if is_low(rt) else None


def scalar_of(value: Any, dt: Any) -> Any:
    """A real Python number rounded to the 16-bit dtype ``dt`` (when not None), as PyTorch
    converts an ``alpha`` to the tensors' scalar type."""
    if dt is None or isinstance(value, (complex, bool)):
        return value
    return float(np.asarray(value, dtype=dt.numpy).astype(np.float32))


#: elements of a contiguous 16-bit float tensor that PyTorch's CPU binary kernels take
#: ``Vectorized`` at a time (its AVX512 build); the last ``n % 32`` go through a scalar loop
SCALAR_TAIL = 32


def round_scalar_tail(product: np.ndarray, low: np.dtype, *tensors: Any) -> None:
    """``alpha * other`` (float32) of an add/sub of 16-bit float tensors, as PyTorch's CPU
    kernel makes it: its vector loop fuses it into the sum (rounded once), but its scalar
    loop for the last ``n % 32`` elements computes it in the 16-bit type, so those are
    rounded in place here. Only where that loop runs over one flat range: ``tensors`` (the
    operands) of one shape, C-contiguous."""
    tail = product.size % SCALAR_TAIL
    shapes = {t._data.shape for t in tensors if isinstance(t, Tensor)}
    if not tail or len(shapes) != 1 or len(tensors) != 2 or product.shape != shapes.pop():
        return
    if not all(isinstance(t, Tensor) and t._data.flags.c_contiguous for t in tensors):
        return
    flat = product.reshape(-1)
    flat[-tail:] = flat[-tail:].astype(low).astype(np.float32)


def computed_in_float32(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """Decorate a composite op: when its tensor arguments promote to float16 or bfloat16,
    they are given to it as float32 and its result is rounded back once (differentiably)."""

    @functools.wraps(fn)
    def op(*args: Any, **kwargs: Any) -> Tensor:
        low = low_result(*args, *kwargs.values())
        if low is None:
            return fn(*args, **kwargs)

        def up(a: Any) -> Any:
            return a.float() if isinstance(a, Tensor) and is_low(a._data.dtype) else a

        out = fn(*map(up, args), **{k: up(v) for k, v in kwargs.items()})
        return out.to(low)

    return op
