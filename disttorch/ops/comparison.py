"""Ops on values rather than smooth functions: comparisons (``== != < <= > >=``), logical
and bitwise ops (``& | ^ ~``), integer-valued arithmetic (``//``, ``%``, ``fmod``),
rounding, ``sign``, NaN/inf tests, closeness tests, ``any``/``all``,
``argmax``/``argmin``, and ordering (``sort``, ``argsort``, ``topk``, ``unique``).

Most results are bool or integer tensors, or values that carry no gradient, computed
straight on NumPy arrays without a graph node. The exceptions follow PyTorch: ``sort`` and
``topk`` values are picked from the input and pass gradients back to it; ``%`` and
``fmod`` pass gradients to both operands; rounding and ``sign`` pass zeros back
(``flat.py``).
"""

from __future__ import annotations

import builtins
from typing import Any, Callable

import numpy as np

from .._dtype import check_python_int, python_scalar, result_type, scalar_type_name
from .._tensor import Tensor, _tensor_arg
from ..autograd.function import Function, _dispatch, named_node
from ..kernels.reductions import reduce_along, scan_along, ufunc_reduce
from ..kernels.std_sort import std_sort
from ..kernels.threads import elementwise, row_major
from ..kernels.torch_topk import SORT_THRESHOLD, replays, sort_order, topk_order
from ._helpers import (
    _dims,
    _return_type,
    _type_name,
    arr,
    binary,
    broadcast_error,
    int_arg,
    sign_array,
    wrap_dim,
    wrapped_int,
)
from .dtype_rules import check_kernel, refuse_kernel
from .flat import flat, no_derivative
from .scalar_self import number_self

__all__ = [
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "not_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
    "floor_divide",
    "remainder",
    "fmod",
    "floor",
    "ceil",
    "round",
    "trunc",
    "sign",
    "isnan",
    "isinf",
    "isfinite",
    "isclose",
    "allclose",
    "equal",
    "any",
    "all",
    "count_nonzero",
    "argmax",
    "argmin",
    "sort",
    "argsort",
    "topk",
    "unique",
]

TENSOR_METHODS = tuple(__all__)  # every comparison is also a Tensor method

sort_type = _return_type("sort", ("values", "indices"))
topk_type = _return_type("topk", ("values", "indices"))

#: what the comparison operators take (not a list: ``t == [1, 2]`` is False, as PyTorch's)
_OPERAND_TYPES = (Tensor, np.ndarray, int, float, complex, bool, np.number, np.bool_)


def _operand(x: Any) -> Any:
    """The array of a tensor; lists become arrays; numbers pass through."""
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, (list, tuple)):
        return np.asarray(x)
    check_python_int(x)
    return python_scalar(x) if isinstance(x, np.generic) else x


def _elementwise(ufunc: Callable, a: Any, b: Any) -> np.ndarray:
    """Apply a NumPy ufunc with broadcasting and PyTorch's error for bad shapes (on the op's
    threads when the result is large)."""
    xa, xb = _operand(a), _operand(b)
    try:
        return elementwise(ufunc, xa, xb)
    except ValueError:
        raise broadcast_error(np.shape(xa), np.shape(xb)) from None


# ---------------------------------------------------------------------- comparisons
def _is_complex(x: Any) -> bool:
    return (isinstance(x, Tensor) and x._data.dtype.kind == "c") or isinstance(x, complex)


def _no_complex(x: Any, message: str) -> None:
    """Raise PyTorch's error for ordering complex numbers (they have no order)."""
    if _is_complex(x):
        raise (NotImplementedError if message.startswith('"') else RuntimeError)(message)


def _comparison(ufunc: Callable, name: str) -> Callable:
    ordered = name not in ("eq", "ne")

    def compare(input: Tensor, other: Any) -> Tensor:
        if ordered and (_is_complex(input) or _is_complex(other)):
            kind = scalar_type_name(np.dtype(result_type(arr(input), arr(other))))  # the promoted one
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{kind}'")
        if isinstance(input, Tensor) and input._data.dtype.kind in "iu":
            other = wrapped_int(input._data.dtype, other)  # uint8 >= -1 compares with 255, as PyTorch
        return Tensor._make(np.asarray(_elementwise(ufunc, input, other)))

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = f"Elementwise ``input {_SYMBOLS[name]} other`` as a bool tensor (broadcast)."
    return compare


_SYMBOLS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
eq = _comparison(np.equal, "eq")
ne = _comparison(np.not_equal, "ne")
lt = _comparison(np.less, "lt")
le = _comparison(np.less_equal, "le")
gt = _comparison(np.greater, "gt")
ge = _comparison(np.greater_equal, "ge")
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _dunder(fn: Callable) -> Callable:
    """An operator method: unsupported operand types give NotImplemented (so ``t == None``
    is False, as in PyTorch)."""

    def method(self: Tensor, other: Any) -> Any:
        if not isinstance(other, _OPERAND_TYPES):
            return NotImplemented
        return fn(self, other)

    method.__name__ = fn.__name__
    return method


# ---------------------------------------------------------------------- logical, bitwise
def logical_and(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise ``input and other`` (nonzero is True), as a bool tensor."""
    return Tensor._make(np.asarray(_elementwise(np.logical_and, input, other)))


def logical_or(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise ``input or other`` (nonzero is True), as a bool tensor."""
    return Tensor._make(np.asarray(_elementwise(np.logical_or, input, other)))


def logical_xor(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise exclusive or (nonzero is True), as a bool tensor."""
    return Tensor._make(np.asarray(_elementwise(np.logical_xor, input, other)))


def logical_not(input: Tensor) -> Tensor:
    """Elementwise ``not input`` (nonzero is True), as a bool tensor."""
    return Tensor._make(elementwise(np.logical_not, input._data))


def _bitwise(ufunc: Callable, name: str) -> Callable:
    def op(input: Any, other: Any) -> Tensor:
        check_kernel(name, input, other)
        return Tensor._make(np.asarray(binary(ufunc, input, other)))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{name}`` of integer or bool tensors (``{_SYMBOLS[name]}``)."
    return op


_SYMBOLS.update(bitwise_and="&", bitwise_or="|", bitwise_xor="^")
bitwise_and = _bitwise(np.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(np.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(np.bitwise_xor, "bitwise_xor")


def bitwise_not(input: Tensor) -> Tensor:
    """Elementwise ``~input`` of an integer or bool tensor."""
    refuse_kernel("bitwise_not_cpu", input, "fVc")
    return Tensor._make(elementwise(np.invert, input._data))


def _invert(input: Tensor) -> Tensor:
    """``~input``: PyTorch's operator refuses a floating tensor with a TypeError."""
    if input._data.dtype.kind in "fVc":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(input)


# ---------------------------------------------------------------------- integer-valued arithmetic
def _check_int_zero(xa: Any, xb: Any) -> None:
    """Integer division by zero raises in PyTorch (floats give inf/nan), by a number that
    wraps to zero in the integer type too (``int8_t.fmod(256)``)."""
    rt = result_type(xa, xb)
    if rt.kind in "iub" and np.any(np.asarray(wrapped_int(rt, xb) if rt.kind != "b" else xb) == 0):
        raise RuntimeError("ZeroDivisionError")


def _division_like(ufunc: Callable, xa: Any, xb: Any) -> np.ndarray:
    _check_int_zero(xa, xb)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(binary(ufunc, xa, xb))


def floor_divide_array(input: Any, other: Any) -> np.ndarray:
    """The array of ``input // other`` (rounded toward minus infinity; integers stay integers)."""
    check_kernel("floor_divide", input, other)
    return _division_like(np.floor_divide, _operand(input), _operand(other))


def floor_divide(input: Any, other: Any) -> Tensor:
    """``input // other``: division rounded down (toward minus infinity); integers stay
    integers. No derivative (backward through it raises, as PyTorch's)."""
    return no_derivative(floor_divide_array(input, other), "floor_divide", input, other)


class Modulo(Function):
    """``input - q * other`` for a whole quotient ``q = rounding(input / other)``
    (``fmod``: toward zero; ``remainder``: down). ``q`` is constant between its jumps, so
    the gradient is ``g`` to ``input`` and ``-g * q`` to ``other``, as PyTorch's."""

    _raw = True
    _rounds_numbers = (0, 1)

    @staticmethod
    def forward(ctx, a, b, ufunc, rounding):
        xa, xb = _operand(a), _operand(b)
        ctx._node_name = ("FmodBackward" if ufunc is np.fmod else "RemainderBackward") + str(
            int(isinstance(b, Tensor))
        )
        out = _division_like(ufunc, xa, xb)
        if ufunc is np.remainder and out.dtype.kind in "fV":
            out = _zero_signed_as(out, xa)
        if ctx.needs_input_grad and ctx.needs_input_grad[1]:
            with np.errstate(divide="ignore", invalid="ignore"):
                ctx.quotient = rounding(np.true_divide(xa, xb, dtype=out.dtype))
        return out

    @staticmethod
    def backward(ctx, g):
        na, nb = ctx.needs_input_grad[:2]
        return (g if na else None), (-g * Tensor._make(ctx.quotient) if nb else None), None, None


def _zero_signed_as(out: np.ndarray, xa: Any) -> np.ndarray:
    """A floating ``remainder`` whose zeros carry the dividend's sign, as PyTorch's (its
    ``fmod`` adjusted by the divisor only when non-zero; NumPy's zeros take the divisor's)."""
    zero = out == 0
    if not zero.any():
        return out
    return np.where(zero, np.copysign(np.zeros((), out.dtype), xa).astype(out.dtype), out)


@number_self
def remainder(input: Any, other: Any) -> Tensor:
    """``input % other`` with the sign of ``other`` (Python's modulus)."""
    check_kernel("remainder", input, other)
    return Modulo.apply(input, other, np.remainder, np.floor)


def fmod(input: Any, other: Any) -> Tensor:
    """C-style remainder, with the sign of ``input``."""
    check_kernel("fmod", input, other)
    return Modulo.apply(input, other, np.fmod, np.trunc)


def _float_only(fn: Callable, name: str) -> Callable:
    node = name.capitalize() + "Backward0"  # PyTorch's: FloorBackward0

    def op(input: Tensor) -> Tensor:
        x = input._data
        if x.dtype.kind == "c":
            raise NotImplementedError(f"{name} is not supported for complex inputs")
        refuse_kernel(f"{name}_vml_cpu", input, "b")
        return flat(elementwise(fn, x) if x.dtype.kind in "fV" else x.copy(), node, input)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{name}`` (integers are returned unchanged, bools refused). Zero gradient."
    return op


floor = _float_only(np.floor, "floor")
ceil = _float_only(np.ceil, "ceil")
trunc = _float_only(np.trunc, "trunc")


def round(input: Tensor, *, decimals: int | None = None) -> Tensor:
    """Round half to even (to ``decimals`` places: floating inputs only, as PyTorch's kernel;
    16-bit floats computed in float32). Zero gradient."""
    x = input._data
    kind = x.dtype.kind
    if kind in "cb" or (decimals is not None and kind in "iu"):
        kernel = "round_cpu" if decimals else "round_vml_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(x.dtype)}'")
    if kind not in "fV":
        out = x.copy()
    elif decimals is None:
        out = elementwise(np.round, x)
    elif x.itemsize == 2:
        out = np.round(x.astype(np.float32), decimals).astype(x.dtype)
    else:
        out = elementwise(np.round, x, decimals)
    return flat(out, "RoundBackward0" if decimals is None else "RoundBackward1", input)


def sign(input: Tensor) -> Tensor:
    """-1, 0 or 1 by the sign of each element (bool stays bool). Zero gradient."""
    x = input._data
    if x.dtype.kind == "c":
        raise NotImplementedError(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead."
        )
    return flat(sign_array(x), "SignBackward0", input)


# ---------------------------------------------------------------------- tests of values
def isnan(input: Tensor) -> Tensor:
    """True where the element is NaN."""
    return Tensor._make(elementwise(np.isnan, input._data))


def isinf(input: Tensor) -> Tensor:
    """True where the element is +inf or -inf."""
    return Tensor._make(elementwise(np.isinf, input._data))


def isfinite(input: Tensor) -> Tensor:
    """True where the element is neither inf nor NaN."""
    return Tensor._make(elementwise(np.isfinite, input._data))


def _same_dtype(a: Tensor, b: Tensor) -> None:
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"{_type_name(a)} did not match {_type_name(b)}")


def isclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor:
    """True where ``|input - other| <= atol + rtol * |other|`` (same dtypes required)."""
    _tensor_arg("isclose", input)
    _tensor_arg("isclose", other, "other", 2)
    _same_dtype(input, other)
    return Tensor._make(
        np.asarray(
            _elementwise(
                lambda x, y: np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan), input, other
            )
        )
    )


def allclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """Whether every element of ``input`` is close to ``other`` (see :func:`isclose`)."""
    _tensor_arg("allclose", input)
    _tensor_arg("allclose", other, "other", 2)
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both tensors have the same shape and the same elements."""
    if not isinstance(other, Tensor):
        raise TypeError(f"equal(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    return input._data.shape == other._data.shape and bool(np.array_equal(input._data, other._data))


def _truth(fn: np.ufunc, input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    """``any`` (``fn`` = ``np.logical_or``) or ``all`` (``np.logical_and``) of the elements'
    truth values, split over the op's threads when large."""
    x = input._data
    if isinstance(dim, (tuple, list)) and not dim:  # no dims: each element's own truth
        out = x != 0
    else:
        out = np.asarray(ufunc_reduce(fn, x, _dims(dim, x.ndim), keepdims=keepdim))
    return Tensor._make(out.astype(np.uint8) if x.dtype == np.uint8 else out)


def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Whether any element (over ``dim``, or all; none for an empty tuple of dims) is nonzero,
    as a bool tensor (uint8 for uint8 input, as PyTorch)."""
    return _truth(np.logical_or, input, dim, keepdim)


def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Whether every element (over ``dim``, or all; none for an empty tuple of dims) is
    nonzero, as a bool tensor (uint8 for uint8 input, as PyTorch)."""
    return _truth(np.logical_and, input, dim, keepdim)


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """The number of nonzero elements (over ``dim``, or all), as int64."""
    x = input._data
    return Tensor._make(row_major(np.asarray(np.count_nonzero(x, axis=_dims(dim, x.ndim)), dtype=np.int64)))


# ---------------------------------------------------------------------- arg reductions
def _arg(name: str, fn: Callable, input: Tensor, dim: int | None, keepdim: bool) -> Tensor:
    if type(input) in _dispatch:  # MaskedTensor (its masked argmax), NestedTensor (none)
        own = type(input).__dict__.get(name)
        if own is None:
            raise NotImplementedError(f"{name} is not supported on {type(input).__name__}")
        return own(input, dim, keepdim)
    _no_complex(input, f"{name}(): does not support complex input")
    x = input._data
    if x.dtype == np.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        if x.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        idx = np.asarray(fn(x.reshape(-1)))
        return Tensor._make(idx.reshape((1,) * x.ndim) if keepdim else idx)
    d = wrap_dim(dim, x.ndim)
    if x.ndim == 0:
        return Tensor._make(np.zeros((), dtype=np.int64))
    if x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    idx = reduce_along(lambda a: fn(a, axis=d, keepdims=True), x, (d,), np.intp)  # slices on the op's threads
    return Tensor._make(idx if keepdim else idx.squeeze(d))


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the (first) largest element, over the flattened tensor or along ``dim``."""
    return _arg("argmax", np.argmax, input, dim, keepdim)


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the (first) smallest element, over the flattened tensor or along ``dim``."""
    return _arg("argmin", np.argmin, input, dim, keepdim)


# ---------------------------------------------------------------------- ordering
class TakeAlongDim(Function):
    """The elements of ``input`` at ``index`` along ``dim`` (``np.take_along_axis``): the
    values of sort and topk. Backward puts the gradient back at those positions."""

    _raw = True

    @staticmethod
    def forward(ctx, a, index, dim):
        ctx.shape, ctx.index, ctx.dim = a._data.shape, index, dim
        return np.take_along_axis(a._data, index, axis=dim)

    @staticmethod
    def backward(ctx, g):
        return PutAlongDim.apply(g, ctx.index, ctx.dim, ctx.shape), None, None


class PutAlongDim(Function):
    """Zeros of ``shape`` with ``src`` written at ``index`` along ``dim`` (indices are
    distinct within each slice): the adjoint of :class:`TakeAlongDim`."""

    _raw = True

    @staticmethod
    def forward(ctx, src, index, dim, shape):
        ctx.index, ctx.dim = index, dim
        out = np.zeros(shape, dtype=src._data.dtype)
        np.put_along_axis(out, index, src._data, axis=dim)
        return out

    @staticmethod
    def backward(ctx, g):
        return TakeAlongDim.apply(g, ctx.index, ctx.dim), None, None, None


def sortable(x: np.ndarray) -> np.ndarray:
    """``x`` in a dtype whose NumPy sorts and searches order NaN last: bfloat16 (which
    ml_dtypes compares so that NumPy's sorts leave NaNs in place) as float32, exactly."""
    return x.astype(np.float32) if x.dtype.kind == "V" else x


def _order(x: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """Stable sort order along ``dim`` (equal elements keep their original order, also when
    descending; NaN sorts as the largest value), the slices split over the op's threads."""

    def order(a: np.ndarray) -> np.ndarray:
        a = sortable(a)
        if not descending:
            return np.argsort(a, axis=dim, kind="stable")
        rev = np.argsort(np.flip(a, dim), axis=dim, kind="stable")
        return (a.shape[dim] - 1) - np.flip(rev, dim)

    return scan_along(order, x, dim)


def _ordered(input: Tensor, dim: int, descending: bool, stable: bool) -> tuple:
    """(dim index, order) with 0-dim inputs treated as one element; unstable, equal values
    come out in the order PyTorch's CPU kernel leaves them (:func:`_sort_ties_as_pytorch`)."""
    _no_complex(input, "Sort does not support complex dtypes on CPU")
    x = input._data
    d = wrap_dim(dim, x.ndim)
    if x.ndim == 0:
        return d, np.zeros((), dtype=np.int64)
    order = _order(x, d, descending)
    if not stable:
        _sort_ties_as_pytorch(x, order, d, descending)
    return d, order


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    """``(values, indices)`` sorted along ``dim``; values pass gradients back to input.
    ``stable=False`` orders equal values as PyTorch's CPU kernel does."""
    d, idx = _ordered(input, dim, descending, bool(stable))
    if input._data.ndim == 0:
        return sort_type(named_node(input.clone(), "SortBackward0"), Tensor._make(idx))
    return sort_type(named_node(TakeAlongDim.apply(input, idx, d), "SortBackward0"), Tensor._make(idx))


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """Indices that sort ``input`` along ``dim`` (equal values ordered as by :func:`sort`)."""
    return Tensor._make(_ordered(input, dim, descending, bool(stable))[1])


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    """``(values, indices)`` of the ``k`` largest (or smallest) elements along ``dim``;
    values pass gradients back to input."""
    _no_complex(input, "topk does not support complex dtypes on CPU")
    x = input._data
    if x.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    d, k = wrap_dim(dim, x.ndim), int_arg(k, "k")
    n = x.shape[d] if x.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if x.ndim == 0:
        return topk_type(
            named_node(input.clone(), "TopkBackward0"), Tensor._make(np.zeros((), dtype=np.int64))
        )
    order = _order(x, d, largest)
    idx = np.take(order, np.arange(k), axis=d)
    if k > 0 and x.dtype.kind in "fiuV":
        _replay_tied(x, order, idx, d, k + 1, lambda row: topk_order(row, k, largest, sorted))
    return topk_type(named_node(TakeAlongDim.apply(input, idx, d), "TopkBackward0"), Tensor._make(idx))


#: PyTorch sorts a 1-D integer tensor of at least this many elements ascending with a
#: (stable) radix sort
_RADIX_SORT_MIN = 32768


def _sort_ties_as_pytorch(x: np.ndarray, order: np.ndarray, d: int, descending: bool) -> None:
    """Rewrite in the stable ``order`` the slices where equal values are reordered by
    PyTorch's unstable CPU sort: the C++ library's ``sort`` (:mod:`..kernels.torch_topk`) of
    slices longer than its insertion-sort threshold, except where PyTorch sorts stably (a
    large 1-D integer tensor sorted ascending: a radix sort). Without numba, slices longer
    than :data:`..kernels.torch_topk.PYTHON_MAX` keep equal values in input order."""
    n = x.shape[d]
    if n <= SORT_THRESHOLD or not replays(n) or x.dtype.kind not in "fiubV":
        return
    if x.ndim == 1 and x.dtype.kind in "iu" and not descending and n >= _RADIX_SORT_MIN:
        return
    _replay_tied(x, order, order, d, n, lambda row: sort_order(row, descending))


def _replay_tied(
    x: np.ndarray,
    order: np.ndarray,
    idx: np.ndarray,
    d: int,
    width: int,
    replay: Callable,
    also: np.ndarray | None = None,
) -> None:
    """Rewrite in ``idx`` (the first positions of ``order`` along ``d``) the slices where
    equal values decide which indices come first (equal values among the first ``width`` in
    ``order``), and those where ``also`` (one flag per slice, in C order) is set, with
    ``replay(slice)``, PyTorch's CPU kernel's choice. Other slices keep the sorted order,
    which is PyTorch's."""
    top = np.moveaxis(
        np.take_along_axis(x, np.take(order, np.arange(min(width, x.shape[d])), axis=d), d), d, -1
    )
    same = top[..., 1:] == top[..., :-1]
    if x.dtype.kind in "fV":  # (V: bfloat16)
        same |= np.isnan(top[..., 1:]) & np.isnan(top[..., :-1])
    tied = same.any(axis=-1).reshape(-1)
    tied = np.flatnonzero(tied if also is None else tied | also.reshape(-1))
    if tied.size == 0:
        return
    rows, out = np.moveaxis(x, d, -1).reshape(-1, x.shape[d]), np.moveaxis(idx, d, -1)
    flat_out = out.reshape(-1, out.shape[-1]) if out.flags.c_contiguous else None
    done: dict = {}  # identical slices (a batch of zeros, say) are replayed once
    for r in tied:
        key = rows[r].tobytes()
        if key not in done:
            done[key] = replay(rows[r])
        if flat_out is not None:
            flat_out[r] = done[key]
        else:
            out[np.unravel_index(r, out.shape[:-1])] = done[key]


def unique_axis(x: np.ndarray, dim: int) -> int:
    """``dim`` of ``unique`` (and ``unique_consecutive``) wrapped, with PyTorch's errors for a 0-d tensor and for an empty
    dimension other than ``dim``."""
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    axis = wrap_dim(dim, x.ndim)
    if 0 in x.shape[:axis] + x.shape[axis + 1 :]:
        raise RuntimeError(
            "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied"
        )
    return axis


def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """The distinct elements (sorted), over the flattened tensor or as distinct slices along
    ``dim``; optionally with ``inverse`` indices (shaped like the input, or one per slice)
    and per-value ``counts``. Each NaN is distinct (PyTorch compares with ``!=``)."""
    x = input._data
    if x.dtype.kind == "c":
        raise NotImplementedError(f"\"unique\" not implemented for '{scalar_type_name(x.dtype)}'")
    axis = None if dim is None else unique_axis(x, dim)
    if axis is not None and x.dtype.kind in "fV" and np.isnan(x).any():
        values, inverse, counts = _unique_slices_with_nan(x, axis)
    else:
        nan_kw = {"equal_nan": False} if axis is None else {}
        values, inverse, counts = np.unique(
            sortable(x), return_inverse=True, return_counts=True, axis=axis, **nan_kw
        )
    op = "_unique2" if axis is None else "unique_dim"
    out = [no_derivative(values.astype(x.dtype, copy=False), op, input, declared=True)]
    if return_inverse:
        inv = inverse.reshape(x.shape) if axis is None else inverse.reshape(-1)
        out.append(Tensor._make(inv.astype(np.int64, copy=False)))
    if return_counts:
        out.append(Tensor._make(counts.astype(np.int64, copy=False)))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_slices_with_nan(x: np.ndarray, axis: int) -> tuple:
    """``unique(dim=axis)``'s ``(values, inverse, counts)`` of a float array holding NaN, as
    PyTorch's kernel finds them: the slices sorted by ``std::sort`` with a lexicographic ``<``
    (which NaN makes inconsistent, so the order is that algorithm's, ``kernels/std_sort.py``),
    then neighbours equal in every element merged (a slice holding NaN equals none)."""
    rows = np.moveaxis(x, axis, 0).reshape(x.shape[axis], -1).astype(np.float64).tolist()

    def less(a: int, b: int) -> bool:
        for lhs, rhs in zip(rows[a], rows[b]):
            if lhs < rhs:
                return True
            if lhs > rhs:
                return False
        return False

    order = std_sort(list(range(len(rows))), less)
    inverse, counts, kept = np.empty(len(rows), np.int64), [], []
    for i in order:
        if not kept or not builtins.all(lhs == rhs for lhs, rhs in zip(rows[i], rows[kept[-1]])):
            kept.append(i)
            counts.append(0)
        counts[-1] += 1
        inverse[i] = len(kept) - 1
    return np.take(x, kept, axis=axis), inverse, np.array(counts, np.int64)


# ---------------------------------------------------------------------- operators
def _rfloordiv(a: Tensor, b: Any) -> Tensor:
    return floor_divide(b, a)


def _rmod(a: Tensor, b: Any) -> Tensor:
    return remainder(b, a)


def _count_nonzero_method(self: Tensor, *dims: Any, dim: Any = None) -> Tensor:
    """``t.count_nonzero(dim)``, or with the dims as arguments (``t.count_nonzero(0, 2)``)."""
    return count_nonzero(self, (dims if len(dims) > 1 else dims[0]) if dims else dim)


TENSOR_OPERATORS = {
    "count_nonzero": _count_nonzero_method,
    "__eq__": _dunder(eq),
    "__ne__": _dunder(ne),
    "__lt__": _dunder(lt),
    "__le__": _dunder(le),
    "__gt__": _dunder(gt),
    "__ge__": _dunder(ge),
    "__and__": bitwise_and,
    "__rand__": bitwise_and,
    "__or__": bitwise_or,
    "__ror__": bitwise_or,
    "__xor__": bitwise_xor,
    "__rxor__": bitwise_xor,
    "__invert__": _invert,
    "__floordiv__": floor_divide,
    "__rfloordiv__": _rfloordiv,
    "__mod__": remainder,
    "__rmod__": _rmod,
}
