"""Helpers shared by the op families: unwrapping operands, result dtypes, PyTorch's
broadcasting error message."""

from __future__ import annotations

import collections
import operator
from typing import Any, Callable

import numpy as np

from .._dtype import checked_scalar, get_default_dtype, python_scalar, result_type, scalar_type_name
from .._public_name import package_name
from .._tensor import Tensor, _dim_type_error, _int_arg, _wrap_dim
from ..kernels.tensor_iterator import dim_order
from ..kernels.threads import astype, elementwise

__all__ = [
    "arr",
    "binary",
    "broadcast_error",
    "wrap_dim",
    "int_arg",
    "dims_tuple",
    "float_result",
    "scalar_type_name",
    "wrapped_int",
]

wrap_dim = _wrap_dim
int_arg = _int_arg


def arr(x: Any) -> Any:
    """The NumPy array of a tensor; Python scalars pass through, NumPy scalars become them."""
    if isinstance(x, Tensor):
        return x._data
    return python_scalar(x) if isinstance(x, np.generic) else x


def broadcast_error(sa: tuple, sb: tuple, *more: tuple) -> RuntimeError:
    """PyTorch's message for shapes that do not broadcast, naming the first bad dim (of the
    first shape that does not broadcast with those before it, when there are ``more``)."""
    for sc in more:
        try:
            sa, sb = np.broadcast_shapes(sa, sb), sc
        except ValueError:
            break
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    for d in range(n - 1, -1, -1):
        if pa[d] != pb[d] and pa[d] != 1 and pb[d] != 1:
            return RuntimeError(
                f"The size of tensor a ({pa[d]}) must match the size of tensor b "
                f"({pb[d]}) at non-singleton dimension {d}"
            )
    return RuntimeError(f"shapes {list(sa)} and {list(sb)} are not broadcastable")


def binary(ufunc: Callable, a: Any, b: Any, exact_scalar: bool = False) -> np.ndarray:
    """Apply a NumPy binary ufunc with PyTorch's dtype promotion and error messages (on
    the op's threads when the result is large). ``exact_scalar``: a number (or 0-d tensor)
    as ``b`` of a 16-bit float op enters unrounded, as in PyTorch's ``mul`` and ``div``."""
    xa = a._data if isinstance(a, Tensor) else python_scalar(a) if isinstance(a, np.generic) else a
    xb = b._data if isinstance(b, Tensor) else python_scalar(b) if isinstance(b, np.generic) else b
    rt = result_type(xa, xb)
    if rt.kind in "fc" and rt.itemsize >= 4:
        # PyTorch computes in the result dtype: an integer tensor, or a 0-d tensor of a wider
        # dtype, is cast to it first (NumPy would compute int64 * 0.05 in float64)
        xa, xb = _computed_in(rt, xa, xb), _computed_in(rt, xb, xa)
    elif rt.kind in "fV":
        xa, xb = in_half(rt, xa), in_half(rt, xb, exact_scalar)
    elif rt.kind in "iu":
        xa, xb = wrapped_int(rt, xa), wrapped_int(rt, xb)
    try:
        out = elementwise(ufunc, xa, xb)
    except ValueError:
        raise broadcast_error(np.shape(xa), np.shape(xb)) from None
    if out.dtype != rt:
        with np.errstate(over="ignore"):  # (a 16-bit result beyond its range: inf, silently)
            out = out.astype(rt)
    if out.ndim > 1 and not out.flags.c_contiguous and 1 in out.shape:
        out = _unit_dims_placed(out, xa, xb)
    return out


def _unit_dims_placed(out: np.ndarray, *operands: Any) -> np.ndarray:
    """``out`` (a fresh, strided result of broadcast operands) with the strides of its size-1
    dims as PyTorch's ``TensorIterator`` lays them out: among the others by the operands'
    strides (NumPy puts them outermost). Only those strides change, never the memory; they
    decide the layout a later op infers (``suggest_memory_format``: an image transposed from
    HWC, times a broadcast mask, is not channels-last in PyTorch)."""
    views = [a for a in operands if isinstance(a, np.ndarray) and a.ndim]
    if not views or (len(views) == len(operands) and all(a.shape == out.shape for a in views)):
        return out  # (no operand broadcast: NumPy's layout, as TensorIterator's fast setup)
    lead = [out.ndim - a.ndim for a in views]  # (NumPy's broadcast_to zeroes size-1 strides)
    strides = [
        tuple(0 if i < k or a.shape[i - k] != n else a.strides[i - k] for i, n in enumerate(out.shape))
        for a, k in zip(views, lead)
    ]
    placed, step = [0] * out.ndim, out.itemsize
    for d in reversed(dim_order(out.shape, *strides)):
        placed[d] = step
        step *= out.shape[d]
    if any(n != 1 and placed[d] != out.strides[d] for d, n in enumerate(out.shape)):
        return out  # (the other dims in another order than TensorIterator's: left as NumPy's)
    return np.lib.stride_tricks.as_strided(out, strides=placed)


def _real_sign(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # (bfloat16 NaNs)
        return np.greater(x, 0).astype(x.dtype) - np.less(x, 0).astype(x.dtype)


def sign_array(x: np.ndarray) -> np.ndarray:
    """PyTorch's ``sign`` of a real array: -1, 0 or 1, where NaN and -0.0 give 0 (NumPy's
    gives NaN and -0.0); a bool array stays as it is (a copy)."""
    if x.dtype.kind == "b":
        return x.copy()
    return elementwise(_real_sign if x.dtype.kind in "fV" else np.sign, x)


def in_half(rt: np.dtype, x: Any, exact_scalar: bool = False) -> Any:
    """An operand of a binary op whose result is 16-bit float ``rt``, as PyTorch's kernel
    sees it: a number or an array of another dtype cast to ``rt`` (a Python float beside a
    bfloat16 tensor is rounded to bfloat16 first), except, with ``exact_scalar``, a number
    or an array of one element (which the kernel's iterator sees as a scalar), which stays
    as a float32 (``mul``/``div`` read it unrounded)."""
    if isinstance(x, np.ndarray):
        if x.dtype == rt or x.dtype == np.bool_:
            return x
        if exact_scalar and x.size == 1:
            return np.float32(x) if x.ndim == 0 else x.astype(np.float32)
        return astype(x, rt)
    if isinstance(x, bool) or not isinstance(x, (int, float, np.number)):
        return x
    with np.errstate(over="ignore"):  # (a number beyond the dtype's range: inf, as PyTorch)
        return np.float32(x) if exact_scalar else np.asarray(x, dtype=np.float32).astype(rt)


def check_scalar_operand(value: Any, rt: np.dtype, low: str = "own") -> None:
    """PyTorch's check of a Python number an op converts into dtype ``rt`` (a ``pow``
    exponent, ``where``'s value, ``alpha``): RuntimeError where it overflows the type
    (``float16_t ** 1e10``, ``where(c, int8_t, 1000)``). For a 16-bit float ``rt``, ``low``
    says how: ``"own"`` checked in that type, ``"float32"`` in the float32 it computes in
    (``addcmul``'s ``value``, ``lerp``'s ``weight``), ``"inf"`` unchecked (``where``: inf)."""
    if value.__class__ not in (int, float, complex):
        return
    if rt.kind in "fV" and rt.itemsize == 2 and low != "own":
        if low == "inf":
            return
        rt = np.dtype(np.float32)
    checked_scalar(value, rt)


def wrapped_int(rt: np.dtype, x: Any) -> Any:
    """A Python int outside integer dtype ``rt``'s range as PyTorch casts it: wrapped
    (``uint8_tensor - 1`` subtracts 255); NumPy would raise OverflowError."""
    if type(x) is not int:
        return x
    info = np.iinfo(rt)
    return x if info.min <= x <= info.max else np.asarray(x, dtype=np.int64).astype(rt)


def _computed_in(rt: np.dtype, x: Any, other: Any) -> Any:
    """``x`` cast to ``rt`` for a binary op that must compute in ``rt``, split over the op's
    threads when large; a bool array beside an array of ``rt`` stays as it is (NumPy's loop
    then reads it as 0 and 1 in ``rt`` itself: a ReLU's mask times its gradient)."""
    if not isinstance(x, np.ndarray) or x.dtype == rt:
        return x
    if x.dtype == np.bool_ and isinstance(other, np.ndarray) and other.dtype == rt:
        return x
    return astype(x, rt)


def float_result(out: np.ndarray) -> np.ndarray:
    """Integer results of true division or float functions become the default float dtype."""
    if out.dtype.kind not in "fV":
        return out.astype(get_default_dtype().numpy)
    return out


def dim_int(d: Any) -> int:
    """One entry of a ``dim`` argument as an int (an integer, NumPy's or a 0-d integer tensor
    too); a name (no named tensors here) or a float is PyTorch's TypeError."""
    try:
        return operator.index(d)
    except TypeError:
        raise TypeError(_dim_type_error(d, "int or tuple of ints")) from None


def dim_ints(dims: Any) -> tuple:
    """The entries of a sequence of dims as ints, as PyTorch's parser reads them: a bool
    first is its TypeError (``x.sum((True,))``), a bool after it an int (``(0, True)``)."""
    dims = tuple(dims)
    if dims and isinstance(dims[0], (bool, np.bool_)):
        raise TypeError("argument 'dim' must be tuple of ints, but found element of type bool at pos 0")
    return tuple(dim_int(d) for d in dims)


def dims_tuple(dim: Any, ndim: int) -> tuple | None:
    """Normalise a reduction ``dim`` argument (None, int or sequence) to a tuple of indices."""
    if dim is None:
        return None
    if isinstance(dim, (int, np.integer)) and not isinstance(dim, (bool, np.bool_)):
        return (_wrap_dim(int(dim), ndim),)
    if isinstance(dim, (bool, np.bool_)):
        raise TypeError("argument 'dim' must be int or tuple of ints, not bool")
    if isinstance(dim, str):
        dim_int(dim)  # (its TypeError)
    dims = tuple(_wrap_dim(d, ndim) for d in dim_ints(dim))
    check_unique_dims(dims)
    return dims


def check_unique_dims(dims: tuple) -> None:
    """PyTorch's error for a dim given twice (after wrapping): ``dim 0 appears multiple times``."""
    if len(set(dims)) != len(dims):
        repeated = next(d for i, d in enumerate(dims) if d in dims[:i])
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")


def scalar_as_vector(fn: Callable, input: Tensor, dim: int, *args: Any, **kwargs: Any) -> Any:
    """``fn(input, dim, ...)`` for a 0-d ``input``: PyTorch treats a scalar's dim 0 (or -1) as the
    one dim of a 1-element vector, so run ``fn`` on that vector and give 0-d results back
    (a named tuple of results stays one)."""
    wrap_dim(dim, 0)
    out = fn(input.reshape(1), 0, *args, **kwargs)
    if isinstance(out, tuple):
        vals = [o.reshape(()) for o in out]
        return type(out)(*vals) if hasattr(out, "_fields") else tuple(vals)
    return out.reshape(())


def no_complex(x: Any, message: str, error: type = NotImplementedError) -> None:
    """Raise PyTorch's error (``message``) when ``x`` is a complex tensor the op does not take."""
    if isinstance(x, Tensor) and x._data.dtype.kind == "c":
        raise error(message)


def complex_kernel_error(name: str, x: Tensor) -> NotImplementedError:
    """PyTorch's message for a kernel without a loop for ``x``'s dtype (complex, integer...):
    ``"name" not implemented for ...``."""
    return NotImplementedError(f"\"{name}\" not implemented for '{scalar_type_name(x._data.dtype)}'")


def float_input(x: Tensor, kernel: str) -> np.ndarray:
    """``x``'s array, which must be floating point: else PyTorch's ``NotImplementedError``
    naming its ``kernel`` (``"silu_cpu" not implemented for 'Long'``)."""
    a = x._data
    if a.dtype.kind not in "fV":  # V: bfloat16 (ml_dtypes)
        raise complex_kernel_error(kernel, x)
    return a


#: every named result type made by ``_return_type``, by name (``torch.return_types``)
RETURN_TYPES: dict[str, type] = {}


def _return_type(name: str, fields: tuple) -> type:
    """A named tuple printed like PyTorch's ``torch.return_types.<name>`` (and listed there)."""
    base = collections.namedtuple(name, fields)

    def __repr__(self: Any) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"{package_name()}.return_types.{name}(\n{body})"

    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__})
    cls.__module__ = "disttorch.return_types"
    RETURN_TYPES[name] = cls
    return cls


def _dims(dim: Any, ndim: int) -> tuple | None:
    """Reduction dims as a tuple of indices; None (and an empty list) mean every dim. A 0-d
    tensor's one element is named by dim 0 or -1, so that reduces every dim too (None)."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return None
    dims = dims_tuple(dim, ndim)
    return None if ndim == 0 else dims


def _type_name(t: Tensor) -> str:
    """PyTorch's scalar-type name in messages: Long, Int, Bool, Byte, Float..."""
    return scalar_type_name(t._data.dtype)
