"""``torch.testing.make_tensor``: a tensor of a shape and dtype filled with random values from
a range that suits the dtype, as tests write them."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from .. import _dtype as dt
from .._creation import empty
from .._random import randint
from .._tensor import Tensor
from .._type_info import finfo, iinfo
from ..ops.complex import view_as_real

__all__ = ["make_tensor"]

_INTEGRAL = ("uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64")
_FLOATING = ("float16", "bfloat16", "float32", "float64")
_COMPLEX = ("complex64", "complex128")
_FLOAT8 = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")


def _bounds(
    dtype: dt.dtype,
    kind: str,
    low: float | None,
    high: float | None,
    lowest: float,
    highest: float,
    default: tuple,
) -> tuple:
    """``[low, high)`` from the caller's bounds (or the dtype's defaults), checked and clamped to
    the ``[lowest, highest)`` the dtype can hold; ``kind`` is ``"integral"`` (bounds round up to
    integers), ``"floating"`` (``low == high`` is deprecated but allowed) or ``"float8"``."""
    low = default[0] if low is None else low
    high = default[1] if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and kind == "floating":
        warnings.warn(
            "Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is "
            "deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lowest}, {highest})"
        )
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if kind == "integral":
        return math.ceil(low), math.ceil(high)
    return low, high


def _fill_uniform(t: Tensor, low: float, high: float) -> None:
    """Uniform values in ``[low, high)``; a range wider than the dtype's largest value is drawn
    at half scale and doubled (its width would overflow)."""
    if high - low >= finfo(t.dtype).max:
        t.uniform_(low / 2, high / 2).mul_(2)
    else:
        t.uniform_(low, high)


def make_tensor(
    *shape: int | Sequence[int],
    dtype: dt.dtype,
    device: Any,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """A tensor of ``shape`` and ``dtype`` with values drawn uniformly from ``[low, high)``
    (defaults: bool ``[0, 2)``, unsigned ``[0, 10)``, signed ``[-9, 10)``, floating and complex
    ``[-9, 9)``; bounds beyond the dtype's range are clamped to it). ``noncontiguous`` gives
    every other element of a tensor twice as wide in its last dim; ``exclude_zero`` replaces
    zeros by 1 (bool, integers) or the dtype's smallest normal number; ``requires_grad`` only
    for floating and complex dtypes."""
    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = shape[0]
    shape = tuple(shape)
    name = str(dtype).split(".")[-1]
    integral = dtype is dt.bool or name in _INTEGRAL
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
            f"noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    if requires_grad and integral:
        raise ValueError(
            f"`requires_grad=True` is not supported for boolean and integral dtypes, but got dtype={dtype}"
        )
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is dt.bool:
        low, high = _bounds(dtype, "integral", low, high, 0, 2, (0, 2))
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif integral:
        info = iinfo(dtype)
        top = info.max + (dtype is not dt.int64)
        low, high = _bounds(dtype, "integral", low, high, info.min, top, (-9, 10))
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif name in _FLOATING or name in _COMPLEX or name in _FLOAT8:
        info = finfo(dtype)
        low, high = _bounds(
            dtype, "float8" if name in _FLOAT8 else "floating", low, high, info.min, info.max, (-9, 9)
        )
        drawn = dt.float32 if name in _FLOAT8 else dtype
        result = empty(shape, device=device, dtype=drawn)
        _fill_uniform(view_as_real(result) if name in _COMPLEX else result, low, high)
        result = result.to(dtype)
    else:
        raise TypeError(
            f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor(). "
            "To request support, file an issue at: https://github.com/pytorch/pytorch/issues"
        )
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if integral else finfo(dtype).tiny
    if name in _FLOATING or name in _COMPLEX:
        result.requires_grad = requires_grad
    return result
