"""Reductions: sum, mean, max/min (with indices over a dim), amax/amin, median, prod,
var/std, logsumexp, norm; the scans cumsum and cumprod and their inverse ``diff``; and
``softmax``/``log_softmax`` at the top level (the ones of ``nn.functional``).

Backward of a reduction broadcasts the upstream gradient back over the reduced dims and
weights it per element (``amax`` splits it evenly among ties; ``max(dim)`` sends it to the
element it selected). Ops whose gradient uses the forward result keep it as an array and
recompute it with a tensor op when the backward pass is itself recorded.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from .. import _native_warnings
from .._dtype import get_default_dtype, promote_types, scalar_type_name
from .._tensor import Tensor
from ..autograd.autocast_state import autocast_op
from ..autograd.function import Function, named_node
from ..autograd.grad_mode import recording
from ..autograd.saved_fields import ABSENT, kept, saved
from ..kernels.reductions import add_reduce, lane_norms, reduce_along, scan_along, ufunc_reduce
from ..kernels.threads import elementwise as _split
from ..kernels.threads import get_num_threads
from ..kernels.torch_sum import dims_sum, whole_sum
from ..kernels.torch_var import dims_var, squared_deviations
from ._helpers import (
    _dims,
    _return_type,
    _type_name,
    complex_kernel_error,
    int_arg,
    scalar_as_vector,
    wrap_dim,
)
from .dtype_rules import kernel_error
from .elementwise import abs as _abs
from .elementwise import cast, exp, maximum, minimum, where
from .flat import flat
from .linalg_decomp import SVD
from .linalg_low_precision import refuse_low_precision
from .shape import PadAlong, cat
from .softmax import log_softmax as _log_softmax
from .softmax import softmax as _softmax
from .sparse_base import SparseBase

__all__ = [
    "sum",
    "mean",
    "max",
    "min",
    "amax",
    "amin",
    "median",
    "prod",
    "var",
    "std",
    "var_mean",
    "std_mean",
    "logsumexp",
    "norm",
    "cumsum",
    "cumprod",
    "diff",
    "softmax",
    "log_softmax",
]

TENSOR_METHODS = (
    "sum",
    "mean",
    "max",
    "min",
    "amax",
    "amin",
    "median",
    "prod",
    "var",
    "std",
    "logsumexp",
    "norm",
    "cumsum",
    "cumprod",
    "diff",
    "softmax",
    "log_softmax",
)


# ---------------------------------------------------------------------- result types
max_type = _return_type("max", ("values", "indices"))
min_type = _return_type("min", ("values", "indices"))
median_type = _return_type("median", ("values", "indices"))


# ---------------------------------------------------------------------- helpers
def _kept_shape(shape: tuple, dims: tuple | None) -> tuple:
    """``shape`` with the reduced dims set to 1 (the ``keepdim=True`` shape)."""
    if dims is None:
        return (1,) * len(shape)
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _reduced_shape(shape: tuple, dims: tuple | None) -> tuple:
    """``shape`` without the reduced dims (the ``keepdim=False`` shape)."""
    return () if dims is None else tuple(s for i, s in enumerate(shape) if i not in dims)


def _expand_back(
    g: Tensor, shape: tuple, dims: tuple | None, keepdim: bool, weight: np.ndarray | float | None = None
) -> Tensor:
    """Undo a reduction's shape change: the reduced gradient ``g`` spread back over the
    input's ``shape`` (reduced dims reinserted, then broadcast), times a constant scalar or
    per-element ``weight`` if given.

    When the backward pass is not recorded this is one NumPy op into a fresh array;
    otherwise it is made of tensor ops so that it can be differentiated again.
    """
    gk = g._data
    if not keepdim and gk.ndim != len(shape):
        gk = gk.reshape(_kept_shape(shape, dims))
    if not recording():
        out = np.empty(shape, dtype=gk.dtype)
        if weight is None:
            out[...] = gk
        else:
            np.multiply(gk, weight, out=out, casting="unsafe")
        return Tensor._make(out)
    if gk is not g._data:
        g = g.reshape(gk.shape)
    if g._data.shape != shape:
        g = g.expand(shape)
    return g if weight is None else g * Tensor._make(np.asarray(weight, dtype=gk.dtype))


def _shaped(out: np.ndarray, shape: tuple, dims: tuple | None, keepdim: bool) -> np.ndarray:
    """A result computed with kept dims, in the shape the caller asked for."""
    return out if keepdim else out.reshape(_reduced_shape(shape, dims))


def _kept_out(ctx: Any, shape: tuple) -> np.ndarray:
    """The forward result ``ctx.out`` (the very array the output tensor holds, so in-place
    changes to it are detected) viewed with the reduced dims kept, for broadcasting."""
    return ctx.out.reshape(_kept_shape(shape, ctx.dims))


def _count(shape: tuple, dims: tuple | None) -> int:
    n = 1
    for i, s in enumerate(shape):
        if dims is None or i in dims:
            n *= s
    return n


def _float_dtype_check(name: str, x: np.ndarray) -> None:
    if x.dtype.kind not in "fVc":
        raise RuntimeError(f"{name} only support floating point and complex dtypes")


# ---------------------------------------------------------------------- sum, mean
def _reduction_fields(ctx: Any) -> dict:
    """What PyTorch's ``SumBackward``/``MeanBackward`` nodes save: the input's sizes (and
    element count, for mean), and for a reduction over given dims those and ``keepdim``."""
    fields: dict = {"self_sym_sizes": lambda ctx: ctx.shape}
    if isinstance(ctx, Mean):
        fields["self_sym_numel"] = lambda ctx: _count(ctx.shape, None)
    if ctx.name().endswith("Backward1"):
        fields["dim"] = lambda ctx: ctx.dims if ctx.dims is not None else ABSENT
        fields["keepdim"] = lambda ctx: ctx.keepdim
    return fields


def _total(x: np.ndarray, dims: tuple | None, dtype: Any, keepdim: bool) -> np.ndarray:
    """The sum of ``x`` over ``dims`` in ``dtype`` (None: ``x``'s). Every element of a dense
    float32 or float64 array summed in its own dtype: in PyTorch's order
    (``kernels/torch_sum.py``), so a printed sum or mean has its bits; otherwise NumPy's."""
    if dtype is None or np.dtype(dtype) == x.dtype:
        if dims is None or len(set(dims)) == x.ndim:
            total = whole_sum(x)
            if total is not None:
                return np.full((1,) * x.ndim if keepdim else (), total, dtype=x.dtype)
        else:
            out = dims_sum(x, dims, get_num_threads())
            if out is not None:
                return _shaped(out, x.shape, dims, keepdim)
    return add_reduce(x, dims, dtype, keepdim)


class Sum(Function):
    _raw = True
    _blas = True  # float16 accumulated in float32 and rounded once, as PyTorch's reduction kernels
    _backward_saves = _reduction_fields

    @staticmethod
    def forward(ctx, a, dims, keepdim, dtype):
        x = a._data
        if dtype is not None:
            out_dt = dtype.numpy
        elif x.dtype.kind in "biu":
            out_dt = np.int64
        else:
            out_dt = None
        if ctx.needs_input_grad:
            ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        return _total(x, dims, out_dt, keepdim)

    @staticmethod
    def backward(ctx, g):
        return _expand_back(g, ctx.shape, ctx.dims, ctx.keepdim), None, None, None


class Mean(Function):
    _raw = True
    _blas = True  # float16 accumulated in float32 and rounded once, as PyTorch's reduction kernels
    _backward_saves = _reduction_fields

    @staticmethod
    def forward(ctx, a, dims, keepdim, dtype, welford=False):
        """``welford``: over some dims, the mean PyTorch's ``var_mean`` gives (its Welford
        kernel's, ``kernels.torch_var``) where that kernel applies."""
        x = a._data
        if x.dtype.kind not in "fVc" and dtype is None:
            raise RuntimeError(
                f"mean(): could not infer output dtype. Input dtype must be either "
                f"a floating point or complex dtype. Got: {_type_name(a)}"
            )
        if dtype is not None and dtype.numpy.kind not in "fVc":
            raise RuntimeError(
                f"mean(): could not infer output dtype. Optional dtype must be either "
                f"a floating point or complex dtype. Got: {scalar_type_name(dtype.numpy)}"
            )
        if ctx.needs_input_grad:
            ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        n = _count(x.shape, dims)
        if welford and dtype is None:
            moments = dims_var(x, _all_dims(x, dims), 0, False)
            if moments is not None:
                return _shaped(moments[1], x.shape, dims, keepdim)
        total = _total(x, dims, dtype.numpy if dtype is not None else None, keepdim)
        if n == 0:
            return np.full(np.shape(total), np.nan, dtype=total.dtype)
        return np.true_divide(total, n, dtype=total.dtype)

    @staticmethod
    def backward(ctx, g):
        n = _count(ctx.shape, ctx.dims)
        return (
            _expand_back(g, ctx.shape, ctx.dims, ctx.keepdim, np.float64(1 / n) if n else np.nan),
            None,
            None,
            None,
            None,
        )


class _AllDims:
    """The default ``dim`` of reductions PyTorch takes a ``keepdim`` of only with a ``dim``
    (``sum(None, True)`` is accepted, ``sum(keepdim=True)`` refused)."""

    def __repr__(self) -> str:
        return "None"


ALL_DIMS = _AllDims()


def _whole(name: str, dim: Any, keepdim: Any, takes_none: bool = True) -> Any:
    """``dim`` (``None`` for :data:`ALL_DIMS`); a ``keepdim`` without a ``dim`` is PyTorch's
    TypeError, and so is an explicit ``dim=None`` for a reduction that does not take one
    (``not takes_none``: ``x.max(None)``, ``x.prod(None)``)."""
    if dim is None and not takes_none:
        raise TypeError(f"{name}(): argument 'dim' must be int, not NoneType")
    if dim is ALL_DIMS:
        if keepdim is not None:
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got "
                f"(keepdim={type(keepdim).__name__}), but expected one of: (*, dtype) or "
                "(dim, keepdim=False, *, dtype): keepdim is taken only with a dim"
            )
        return None
    return dim


def _reduce(fn: type, input: Tensor, dim: Any, keepdim: bool, *extra: Any) -> Tensor:
    """Apply a reduction Function ``fn(input, dims, keepdim, *extra)`` with normalised dims."""
    return fn.apply(input, _dims(dim, input._data.ndim), keepdim, *extra)


def sum(input: Tensor, dim: Any = ALL_DIMS, keepdim: Any = None, *, dtype: Any = None) -> Tensor:
    """Sum of all elements, or over ``dim`` (int or tuple); bool and integer inputs sum to
    int64 unless ``dtype`` is given."""
    dim = _whole("sum", dim, keepdim)
    keepdim = bool(keepdim)
    if isinstance(input, SparseBase):
        return input.sum(dim, keepdim, dtype)
    out = Sum.apply(input, _dims(dim, input._data.ndim), keepdim, dtype)
    return out if dim is None else named_node(out, "SumBackward1")


def mean(input: Tensor, dim: Any = ALL_DIMS, keepdim: Any = None, *, dtype: Any = None) -> Tensor:
    """Mean of all elements, or over ``dim``; floating inputs only (as PyTorch), unless a
    floating ``dtype`` is given."""
    dim = _whole("mean", dim, keepdim)
    keepdim = bool(keepdim)
    out = Mean.apply(input, _dims(dim, input._data.ndim), keepdim, dtype)
    return out if dim is None else named_node(out, "MeanBackward1")


# ---------------------------------------------------------------------- max, min, amax, amin
class Amax(Function):
    """Max over dims; the gradient is shared evenly among the elements equal to the max."""

    _raw = True
    ufunc = np.maximum

    @classmethod
    def forward(cls, ctx, a, dims, keepdim):
        x = a._data
        if x.size == 0 and (dims is None or builtins.any(x.shape[d] == 0 for d in dims)):
            name = cls.__name__.lower()
            if dims is None:
                raise RuntimeError(
                    f"{name}(): Expected reduction dim to be specified for "
                    f"input.numel() == 0. Specify the reduction dim with the "
                    f"'dim' argument."
                )
            raise IndexError(f"{name}(): Expected reduction dim {dims[0]} to have non-zero size.")
        out = _shaped(np.asarray(ufunc_reduce(cls.ufunc, x, dims, keepdims=True)), x.shape, dims, keepdim)
        if ctx.needs_input_grad:
            ctx.save_for_backward(a)
            ctx.out, ctx.dims, ctx.keepdim = out, dims, keepdim
        return out

    _nan_hits = False  # a NaN result's gradient to the NaNs (max/min of all elements), else NaN

    @classmethod
    def backward(cls, ctx, g):
        (a,) = ctx._checked_saved()
        kept = _kept_out(ctx, a._data.shape)
        hit = a._data == kept
        if cls._nan_hits and np.isnan(kept).any():  # PyTorch's evenly_distribute_backward
            hit = np.isnan(a._data) if np.isnan(kept).all() else hit
        with np.errstate(invalid="ignore"):  # (a NaN amax: no element equals it, NaN as PyTorch's)
            w = hit / hit.sum(axis=ctx.dims, keepdims=True)
        return (
            _expand_back(g, a._data.shape, ctx.dims, ctx.keepdim, w.astype(g._data.dtype, copy=False)),
            None,
            None,
        )


class Amin(Amax):
    ufunc = np.minimum


class Max(Amax):
    """``max(input)`` over every element (gradient shared evenly among ties, or among the
    NaNs when the result is NaN, as PyTorch's)."""

    _node_name = "MaxBackward1"
    _nan_hits = True


class Min(Amin):
    """``min(input)`` over every element (as :class:`Max`)."""

    _node_name = "MinBackward1"
    _nan_hits = True


class MaxDim(Function):
    """``max(input, dim)``: ``(values, indices)``; the gradient goes to the selected element."""

    _raw = True
    _node_name = "MaxBackward0"
    materialize_grads = False  # indices get no gradient
    arg_fn, value_fn = staticmethod(np.argmax), staticmethod(np.max)

    @classmethod
    def forward(cls, ctx, a, dim, keepdim):
        x = a._data
        if x.shape[dim] == 0:
            name = "max" if cls is MaxDim else "min"
            raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
        idx = reduce_along(lambda b: cls.arg_fn(b, axis=dim, keepdims=True), x, (dim,), np.intp)
        values = reduce_along(
            lambda b: cls.value_fn(b, axis=dim, keepdims=True), x, (dim,), x.dtype
        )  # NaN wins in both
        if ctx.needs_input_grad:
            ctx.shape, ctx.idx, ctx.dim, ctx.keepdim = x.shape, idx, dim, keepdim
        if not keepdim:
            values, idx = values.squeeze(dim), idx.squeeze(dim)
        return values, idx

    @staticmethod
    def backward(ctx, g, _g_indices):
        n = ctx.shape[ctx.dim]
        positions = np.arange(n).reshape([n if i == ctx.dim else 1 for i in range(len(ctx.shape))])
        one_hot = positions == ctx.idx
        return _expand_back(g, ctx.shape, (ctx.dim,), ctx.keepdim, one_hot), None, None


class MinDim(MaxDim):
    arg_fn, value_fn = staticmethod(np.argmin), staticmethod(np.min)
    _node_name = "MinBackward0"


def _max_min(input: Tensor, dim: Any, keepdim: bool, other: Any, *, name: str) -> Any:
    largest = name == "max"
    if input._data.dtype.kind == "c" and other is None and not isinstance(dim, Tensor):
        if dim is None:
            raise NotImplementedError(f"\"{name}_all\" not implemented for '{_type_name(input)}'")
        raise RuntimeError(f"{name}(): does not support complex input")
    if isinstance(dim, Tensor):
        other = dim
    if other is not None:
        return (maximum if largest else minimum)(input, other)
    if dim is None:
        return (Max if largest else Min).apply(input, None, keepdim)
    if input._data.ndim == 0:  # a 0-dim tensor reduces over its single element
        return scalar_as_vector(_max_min, input, dim, keepdim, None, name=name)
    d = wrap_dim(dim, input._data.ndim)
    values, indices = (MaxDim if largest else MinDim).apply(input, d, keepdim)
    return (max_type if largest else min_type)(values, indices)


def max(input: Tensor, dim: Any = ALL_DIMS, keepdim: Any = None, *, other: Any = None) -> Any:
    """The largest element; over ``dim``, the named tuple ``(values, indices)``;
    with a tensor as second argument, the elementwise :func:`maximum`."""
    return _max_min(input, _whole("max", dim, keepdim, takes_none=False), bool(keepdim), other, name="max")


def min(input: Tensor, dim: Any = ALL_DIMS, keepdim: Any = None, *, other: Any = None) -> Any:
    """The smallest element; over ``dim``, the named tuple ``(values, indices)``;
    with a tensor as second argument, the elementwise :func:`minimum`."""
    return _max_min(input, _whole("min", dim, keepdim, takes_none=False), bool(keepdim), other, name="min")


def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """Max over ``dim`` (all dims by default); ties share the gradient evenly."""
    if input._data.dtype.kind == "c":
        raise NotImplementedError(f"\"max_values_cpu\" not implemented for '{_type_name(input)}'")
    return _reduce(Amax, input, dim, keepdim)


def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """Min over ``dim`` (all dims by default); ties share the gradient evenly."""
    if input._data.dtype.kind == "c":
        raise NotImplementedError(f"\"min_values_cpu\" not implemented for '{_type_name(input)}'")
    return _reduce(Amin, input, dim, keepdim)


# ---------------------------------------------------------------------- median
def _median_dtype_check(x: np.ndarray) -> None:
    if x.dtype.kind == "b":
        raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'")


class Median(Function):
    """``median(input)``: the lower of the two middle values of all elements (NaN if any
    is NaN). As PyTorch's, the gradient is shared evenly among the elements equal to it."""

    _raw = True

    @staticmethod
    def forward(ctx, a):
        x = a._data
        _median_dtype_check(x)
        flat = x.reshape(-1)
        if flat.size == 0 and x.dtype.kind not in "fV":  # PyTorch's integer "NaN": the minimum
            out = np.full((), np.iinfo(x.dtype).min, dtype=x.dtype)
        elif flat.size == 0 or (flat.dtype.kind in "fV" and np.isnan(flat).any()):
            out = np.full((), np.nan, dtype=x.dtype)
        else:
            k = (flat.size - 1) // 2
            out = np.asarray(np.partition(flat, k)[k])
        if ctx.needs_input_grad:
            ctx.save_for_backward(a)
            ctx.out = out
        return out

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx._checked_saved()
        x, m = a._data, ctx.out
        hit = (x == m) | (np.isnan(x) & np.isnan(m))  # a NaN median comes from the NaNs
        w = hit / hit.sum()
        return _expand_back(g, x.shape, None, False, w.astype(g._data.dtype, copy=False))


class MedianDim(MaxDim):
    """``median(input, dim)``: ``(values, indices)`` of the lower median of each slice (a
    slice with NaN gives NaN and the index of its first NaN); the gradient goes to the
    selected element."""

    _node_name, _profiled_as = "MedianBackward1", "aten::median"

    @staticmethod
    def forward(ctx, a, dim, keepdim):
        x = a._data
        _median_dtype_check(x)
        n = x.shape[dim]
        if n == 0:
            raise IndexError(f"median(): Expected reduction dim {dim} to have non-zero size.")
        k = (n - 1) // 2

        def lower_median(a: np.ndarray) -> np.ndarray:  # each slice's index, kept dim
            # PyTorch selects the k-th in (value, index) order: among equal values the
            # k-th of a stable sort (NaN sorts last)
            idx = np.take(np.argsort(a, axis=dim, kind="stable"), [k], axis=dim)
            if a.dtype.kind in "fV":
                nan = np.isnan(a)
                has_nan = nan.any(axis=dim, keepdims=True)
                if has_nan.any():
                    idx = np.where(has_nan, np.argmax(nan, axis=dim, keepdims=True), idx)
            return idx

        idx = reduce_along(lower_median, x, (dim,), np.intp)  # slices split over the op's threads
        values = np.take_along_axis(x, idx, axis=dim)
        if ctx.needs_input_grad:
            ctx.shape, ctx.idx, ctx.dim, ctx.keepdim = x.shape, idx, dim, keepdim
        if not keepdim:
            values, idx = values.squeeze(dim), idx.squeeze(dim)
        return values, idx


def median(input: Tensor, dim: Any = ALL_DIMS, keepdim: bool = False) -> Any:
    """The median of all elements (for an even count, the lower of the two middle values;
    NaN if any element is NaN); over ``dim``, the named tuple ``(values, indices)``. Where
    a slice holds the median value more than once, the index is PyTorch's: that of the
    element at the median's place when equal values keep their order.
    """
    if input._data.dtype.kind == "c":
        raise complex_kernel_error("median_cpu", input)
    if dim is ALL_DIMS:
        return Median.apply(input)
    if not isinstance(dim, (int, np.integer)):
        raise TypeError(f"median(): argument 'dim' (position 2) must be int, not {type(dim).__name__}")
    d = wrap_dim(dim, input._data.ndim)
    if input._data.ndim == 0:  # a 0-dim tensor: its own median at index 0, still 0-dim
        values, indices = MedianDim.apply(input.reshape(1), 0, False)
    else:
        values, indices = MedianDim.apply(input, d, keepdim)
    return median_type(values, indices)


# ---------------------------------------------------------------------- prod
def _prod_of_others(x: np.ndarray, axis: int) -> np.ndarray:
    """For each element, the product of the other elements of its slice along ``axis``
    (exclusive products from both ends: exact with zeros, no division)."""
    n = x.shape[axis]
    head = [slice(None)] * x.ndim
    ones_shape = list(x.shape)
    ones_shape[axis] = 1
    one = np.ones(ones_shape, dtype=x.dtype)
    head[axis] = slice(0, n - 1)
    left = np.concatenate([one, np.cumprod(x, axis=axis)[tuple(head)]], axis=axis)
    rev = np.flip(x, axis)
    right = np.flip(np.concatenate([one, np.cumprod(rev, axis=axis)[tuple(head)]], axis=axis), axis)
    return left * right


def _prod_of_others_graph(a: Tensor, dims: tuple | None) -> Tensor:
    """:func:`_prod_of_others` as tensor ops, for a recorded backward: each element's
    slice repeated with that element replaced by 1, then multiplied out (n x n per slice)."""
    x = a.reshape(-1) if dims is None else a
    d = 0 if dims is None else dims[0]
    n, shape = x._data.shape[d], x._data.shape
    rows = x.unsqueeze(d).expand(shape[:d] + (n,) + shape[d:])  # rows[.., i, j, ..] = x[.., j, ..]
    eye = np.eye(n, dtype=bool).reshape((1,) * d + (n, n) + (1,) * (len(shape) - d - 1))
    others = Prod.apply(where(Tensor._make(eye), 1.0, rows), (d + 1,), False, None)
    return others.reshape(a._data.shape)


class Prod(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, dims, keepdim, dtype):
        x = a._data
        out_dt = dtype.numpy if dtype is not None else (np.int64 if x.dtype.kind in "biu" else None)
        out = np.asarray(ufunc_reduce(np.multiply, x, dims, out_dt, keepdim))
        if ctx.needs_input_grad:
            ctx.save_for_backward(a)
            ctx.out, ctx.dims, ctx.keepdim = out, dims, keepdim
        return out

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx._checked_saved()
        x, dims, keepdim = a._data, ctx.dims, ctx.keepdim
        if recording():
            gb = _expand_back(g, x.shape, dims, keepdim)
            return gb * _prod_of_others_graph(a, dims).conj(), None, None, None
        if (x == 0).any():
            flat = x.reshape(-1) if dims is None else x
            others = _prod_of_others(flat, 0 if dims is None else dims[0]).reshape(x.shape)
        else:
            others = _kept_out(ctx, x.shape) / x
        return _expand_back(g, x.shape, dims, keepdim, np.conj(others)), None, None, None


@autocast_op("fp32")
def prod(input: Tensor, dim: Any = ALL_DIMS, keepdim: Any = None, *, dtype: Any = None) -> Tensor:
    """Product of all elements, or over one ``dim``; integers multiply in int64.

    The gradient is exact where the input has zeros (the product of the other elements),
    and so is its own gradient (``create_graph=True``).
    """
    dim = _whole("prod", dim, keepdim, takes_none=False)
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    return _reduce(Prod, input, dim, bool(keepdim), dtype)


# ---------------------------------------------------------------------- var, std
def _correction(dim: Any, unbiased: Any, correction: Any) -> tuple:
    """Sort out ``var(x, unbiased)``, ``var(x, dim, unbiased)`` and ``correction=``."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(
            "var/std received an invalid combination of arguments: both 'unbiased' and "
            "'correction' (expected one of them)"
        )
    if correction is None:
        correction = 1 if unbiased is None else int(unbiased)
    return dim, correction


def _variance(x: np.ndarray, dims: tuple | None, n: int) -> np.ndarray:
    """The biased variance of real floats over ``dims`` (kept), as ``np.var`` computes it
    (mean, squared deviations, their mean; divided as float64 into the input's dtype),
    each step split over the op's threads."""

    def mean(a: np.ndarray) -> np.ndarray:
        total = ufunc_reduce(np.add, a, dims, keepdims=True)
        return np.true_divide(total, np.intp(n)).astype(total.dtype, copy=False)

    centred = _split(np.subtract, x, mean(x))
    return mean(_split(np.multiply, centred, centred))


def _all_dims(x: np.ndarray, dims: tuple | None) -> tuple:
    """``dims``, or every dim of ``x`` for None (a reduction of all)."""
    return tuple(builtins.range(x.ndim)) if dims is None else dims


def _to_one(shape: tuple, dims: tuple | None) -> bool:
    """Whether reducing ``dims`` of ``shape`` leaves one element (the dims kept have size 1)."""
    return dims is None or all(d in dims or n == 1 for d, n in enumerate(shape))


def _whole_variance(x: np.ndarray, correction: Any) -> np.float64:
    """The variance of every element of a float32 or float64 ``x`` as PyTorch's CPU kernel
    for a reduction to one element computes it: the mean in ``x``'s dtype (its ``mean()``),
    then the squared deviations summed in float64 (``kernels.torch_var.squared_deviations``),
    divided by ``n - correction`` (inf, or nan for constant input, when not positive)."""
    mean = np.float64(_total(x, None, None, False) / x.dtype.type(x.size))
    total = squared_deviations(x, mean, get_num_threads())
    return total / np.float64(builtins.max(0, x.size - correction))


class Var(Function):
    _raw = True
    _blas = True  # float16 accumulated in float32 and rounded once, as PyTorch's reduction kernels
    take_sqrt = False

    @classmethod
    def forward(cls, ctx, a, dims, keepdim, correction, welford=False):
        """``welford``: var_mean's variance, which PyTorch's Welford kernel (``kernels.torch_var``)
        computes even where the result has one element (var's own kernel for that case differs)."""
        x = a._data
        _float_dtype_check("std and var", x)
        n = _count(x.shape, dims)
        with np.errstate(invalid="ignore", divide="ignore"):
            if (
                welford
                and (moments := dims_var(x, _all_dims(x, dims), correction, cls.take_sqrt)) is not None
            ):
                out = _shaped(moments[0], x.shape, dims, keepdim)
            elif x.dtype.kind == "f" and x.dtype.itemsize >= 4 and x.size and _to_one(x.shape, dims):
                whole = _whole_variance(x, correction)
                shape = _kept_shape(x.shape, dims) if keepdim else _reduced_shape(x.shape, dims)
                out = np.full(shape, np.sqrt(whole) if cls.take_sqrt else whole, x.dtype)
            elif (welford := dims_var(x, dims, correction, cls.take_sqrt)) is not None:
                out = _shaped(welford[0], x.shape, dims, keepdim)
            else:
                out = _variance(x, dims, n) if x.dtype.kind == "f" else np.var(x, axis=dims, keepdims=True)
                out = _shaped(np.asarray(out), x.shape, dims, keepdim)
                if correction:  # n <= correction gives inf (nan for constant slices), as PyTorch
                    out = out * (n / (n - correction) if n > correction else np.inf)
                if cls.take_sqrt:
                    out = np.sqrt(out)
        if ctx.needs_input_grad:
            ctx.save_for_backward(a)
            ctx.correction, ctx.n, ctx.dims, ctx.keepdim = correction, n, dims, keepdim
            if cls.take_sqrt:  # only std's gradient reads the result
                ctx.out = out
        return out

    @classmethod
    def backward(cls, ctx, g):
        """PyTorch's steps: ``(2 / (n - correction)) * grad * (x - mean)``, std's ``grad`` first
        divided by ``2 * std`` (0 where std is 0); 16-bit inputs (saved as float32 copies) are
        cast back so that each step rounds to their dtype."""
        (a,) = ctx._checked_saved()
        low = g._data.dtype if g._data.dtype.itemsize == 2 and a._data.dtype != g._data.dtype else None
        if low is not None:
            a = a.to(g.dtype)
        dims, keepdim = ctx.dims, ctx.keepdim
        gb = _expand_back(g, a._data.shape, dims, keepdim)
        denom = ctx.n - ctx.correction
        if cls.take_sqrt:
            if recording():
                sd = Std.apply(a, dims, True, ctx.correction)
            else:  # where std == 0 the gradient is 0, as PyTorch's
                sd_arr = _kept_out(ctx, a._data.shape)
                sd_arr = sd_arr if low is None else sd_arr.astype(low)
                sd = Tensor._make(np.where(sd_arr == 0, np.inf, sd_arr).astype(sd_arr.dtype))
            gb = gb / (sd * 2)
        if denom <= 0 and dims is None:  # PyTorch's: grad * (nan where x is its mean, else inf),
            # a function of the gradient only (so second derivatives are 0, not NaN)
            x = a.detach()
            at_mean = np.where((x == x.mean())._data, np.nan, np.inf).astype(x._data.dtype)
            return gb * Tensor._make(at_mean), None, None, None, None
        centred = a - a.mean(dims, keepdim=True)
        return (2.0 / denom if denom > 0 else math.inf) * gb * centred, None, None, None, None


class Std(Var):
    take_sqrt = True


def _spread(
    cls: type, name: str, input: Tensor, dim: Any, keepdim: bool, correction: Any, welford: bool = False
) -> Tensor:
    """``cls`` (Var or Std) over ``dim``, warning as PyTorch when no degree of freedom is left;
    ``welford``: var_mean's kernel (see ``Var.forward``)."""
    out = _reduce(cls, input, dim, keepdim, correction, welford)
    n = input.numel() / out.numel() if out.numel() else 0
    if n - correction <= 0:
        _native_warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel). (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/ReduceOps.cpp:1861.)"
        )
    return out


def var(
    input: Tensor,
    dim: Any = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: int | float | None = None,
) -> Tensor:
    """Variance over ``dim`` (all by default) with Bessel's ``correction`` (default 1);
    ``unbiased=False`` is ``correction=0``."""
    dim, c = _correction(dim, unbiased, correction)
    return _spread(Var, "var", input, dim, keepdim, c)


def std(
    input: Tensor,
    dim: Any = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: int | float | None = None,
) -> Tensor:
    """Standard deviation over ``dim`` (all by default) with ``correction`` (default 1)."""
    dim, c = _correction(dim, unbiased, correction)
    return _spread(Std, "std", input, dim, keepdim, c)


def var_mean(
    input: Tensor,
    dim: Any = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: int | float | None = None,
) -> tuple:
    """``(var(input, dim), mean(input, dim))``."""
    dim, c = _correction(dim, unbiased, correction)
    if isinstance(input, Tensor):
        _float_dtype_check("var_mean", input._data)
    out = (
        _spread(Var, "var_mean", input, dim, keepdim, c, True),
        _reduce(Mean, input, dim, bool(keepdim), None, True),
    )
    return tuple(named_node(t, "VarMeanBackward0") for t in out)  # PyTorch's one node for both


def std_mean(
    input: Tensor,
    dim: Any = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: int | float | None = None,
) -> tuple:
    """``(std(input, dim), mean(input, dim))``."""
    dim, c = _correction(dim, unbiased, correction)
    if isinstance(input, Tensor):
        _float_dtype_check("std_mean", input._data)
    out = (
        _spread(Std, "std_mean", input, dim, keepdim, c, True),
        _reduce(Mean, input, dim, bool(keepdim), None, True),
    )
    return tuple(named_node(t, "StdMeanBackward0") for t in out)  # PyTorch's one node for both


# ---------------------------------------------------------------------- logsumexp
class Logsumexp(Function):
    """``log(sum(exp(x - max))) + max``; on 16-bit inputs each of those steps rounds to their
    dtype, as PyTorch composes it (the sum accumulated in float32)."""

    _raw = True
    _own_16_bit = True

    @staticmethod
    def forward(ctx, a, dims, keepdim):
        x = a._data
        if x.dtype.kind not in "fVc":
            x = x.astype(get_default_dtype().numpy)
        low = x.dtype if x.dtype.itemsize == 2 and x.dtype.kind in "fV" else None
        step = (lambda v: v) if low is None else (lambda v: v.astype(low).astype(np.float32))  # noqa: E731
        if low is not None:
            x = x.astype(np.float32)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            m = (
                ufunc_reduce(np.maximum, x.real, dims, keepdims=True)  # complex: by the largest real part
                if x.size
                else np.zeros(_kept_shape(x.shape, dims), x.dtype)
            )
            m = np.where(np.isfinite(m), m, 0).astype(x.dtype, copy=False)
            shifted = step(_split(np.exp, step(_split(np.subtract, x, m))))
            out = step(step(np.log(step(ufunc_reduce(np.add, shifted, dims, keepdims=True)))) + m)
        out = _shaped(out if low is None else out.astype(low), x.shape, dims, keepdim)
        if ctx.needs_input_grad:
            ctx.save_for_backward(a)
            ctx.out, ctx.dims, ctx.keepdim = out, dims, keepdim
        return out

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx._checked_saved()
        if recording():
            gb = _expand_back(g, a._data.shape, ctx.dims, ctx.keepdim)
            return gb * exp(a - logsumexp(a, ctx.dims or (), keepdim=True)).conj(), None, None
        x, out = a._data, _kept_out(ctx, a._data.shape)
        if x.dtype.itemsize == 2 and x.dtype.kind in "fV":  # PyTorch's steps each round to the dtype
            diff = (x.astype(np.float32) - out.astype(np.float32)).astype(x.dtype)
            weight = np.exp(diff.astype(np.float32)).astype(x.dtype).astype(np.float32)
        else:
            weight = np.conj(np.exp(x - out))
        return _expand_back(g, x.shape, ctx.dims, ctx.keepdim, weight), None, None


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input), dim))``, computed stably (shifted by the max)."""
    if dim is None:
        raise TypeError("logsumexp(): argument 'dim' must be tuple of ints, not NoneType")
    return _reduce(Logsumexp, input, dim, keepdim)


# ---------------------------------------------------------------------- norm
class Norm(Function):
    _raw = True
    _blas = True  # float16 accumulated in float32 and rounded once, as PyTorch's reduction kernels
    _node_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, a, dims, keepdim, p, lanes=False):
        x = a._data
        if x.dtype.kind not in "fV":
            raise RuntimeError(
                f"linalg.vector_norm: Expected a floating point or complex tensor "
                f"as input. Got {_type_name(a)}"
            )
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if p == 2 and lanes:
                out = norm2_in_lanes(x, dims)
            elif p == 2:
                out = np.sqrt(ufunc_reduce(np.add, _split(np.multiply, x, x), dims, keepdims=True))
            elif p == 1:
                out = ufunc_reduce(np.add, _split(np.abs, x), dims, keepdims=True)
            elif p == math.inf:
                out = ufunc_reduce(np.maximum, _split(np.abs, x), dims, keepdims=True)
            elif p == -math.inf:
                out = ufunc_reduce(np.minimum, _split(np.abs, x), dims, keepdims=True)
            elif p == 0:
                out = ufunc_reduce(np.add, _split(np.not_equal, x, 0), dims, keepdims=True).astype(x.dtype)
            else:
                out = ufunc_reduce(np.add, _split(np.power, _split(np.abs, x), p), dims, keepdims=True) ** (
                    1.0 / p
                )
        out = _shaped(np.asarray(out, dtype=x.dtype), x.shape, dims, keepdim)
        if ctx.needs_input_grad:
            ctx.save_for_backward(a)
            ctx.out, ctx.dims, ctx.keepdim, ctx.p, ctx.lanes = out, dims, keepdim, p, lanes
            if p in (1, math.inf, -math.inf):  # PyTorch's backward reads the input; piecewise linear
                ctx._grad_reads = "zero"
        return out

    @staticmethod
    def backward(ctx, g):
        """PyTorch's steps (``grad * (x / norm)`` for p = 2); 16-bit inputs (saved as float32
        copies) are cast back so that each step rounds to their dtype."""
        (a,) = ctx._checked_saved()
        low = g._data.dtype if g._data.dtype.itemsize == 2 and a._data.dtype != g._data.dtype else None
        if low is not None:
            a = a.to(g.dtype)
        x, p = a._data, ctx.p
        none = (None, None, None, None)
        if p == 0:
            weight = np.zeros_like(x)
        elif p == 1:
            weight = np.sign(x)
        elif builtins.abs(p) == math.inf:
            hit = np.abs(x) == _kept_out(ctx, x.shape)
            weight = np.sign(x) * hit / hit.sum(axis=ctx.dims, keepdims=True)
        else:
            weight = None
        if weight is not None:  # piecewise-linear norms: constant weights
            return (_expand_back(g, x.shape, ctx.dims, ctx.keepdim, weight),) + none
        gb = _expand_back(g, x.shape, ctx.dims, ctx.keepdim)
        if recording():  # (0 where the norm is 0, as below: NaN in Hessians and forward AD else)
            raw = Norm.apply(a, ctx.dims, True, p, ctx.lanes)
            nrm = raw.masked_fill(raw == 0, math.inf)
        else:  # the gradient is 0 where the norm is 0, as PyTorch's
            kept = _kept_out(ctx, x.shape)
            kept = kept if low is None else kept.astype(low)
            raw = Tensor._make(kept)
            nrm = Tensor._make(np.where(kept == 0, np.inf, kept).astype(kept.dtype))
        if p == 2:
            return (gb * (a / nrm),) + none
        if p > 2:
            return (a * _abs(a) ** (p - 2) * (gb / nrm ** (p - 1)),) + none
        scaled = a.sgn() * _abs(a) ** (p - 1)
        if p > 1:
            return (scaled * (gb / nrm ** (p - 1)),) + none
        return (scaled.masked_fill(a == 0, 0) * gb * raw ** (1 - p),) + none


def check_no_identity(x: Tensor, ord: Any, dim: Any) -> None:
    """PyTorch's refusal of a norm without an identity (``inf``, negative orders) over no
    elements: of an empty tensor, or along an empty dimension."""
    name = "inf" if ord == math.inf else "-inf" if ord == -math.inf else f"{ord:g}"
    if dim is None or not x.dim():
        if x.numel() == 0:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {name} norm on an empty tensor because the "
                "operation does not have an identity"
            )
        return
    for d in dim:
        if x.shape[d] == 0:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {name} norm on the dimension {d}because this "
                "dimension is empty and the operation does not have an identity"
            )


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    """Vector p-norm over ``dim`` (all elements by default): ``p`` is a number (2, 1,
    ``inf``, ``-inf``, 0, any other) or ``'fro'`` (= 2); ``'nuc'``: the nuclear norm of the
    matrices over the two ``dim`` (all of a 2-D input's by default)."""
    if p == "fro" or p is None:
        p = 2
    own_dtype = input._data.dtype
    if dtype is not None:
        check_norm_dtype(input, dtype)
        input = cast(input, dtype)
    if p == "nuc":
        return _nuclear_norm(input, tuple(builtins.range(input.dim())) if dim is None else dim, keepdim)
    if isinstance(p, str):
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    if input._data.dtype.kind == "c":  # the norm of the moduli (a real result, as PyTorch's)
        input = input.abs()
    if p < 0 or p == math.inf:
        check_no_identity(input, p, (dim,) if isinstance(dim, int) else dim)
    return p_norm(input, p, dim, keepdim, own_dtype)


def p_norm(input: Tensor, p: float, dim: Any, keepdim: bool, own_dtype: np.dtype) -> Tensor:
    """The ``p``-norm of a real ``input`` over ``dim`` as PyTorch's one ``linalg_vector_norm``
    node, which ``norm`` and ``linalg.vector_norm`` both make (``own_dtype``: the input's dtype
    before a ``dtype=`` cast); ``p = 0`` counts the non-zeros and passes no gradient at all (the
    inputs' ``.grad`` stays None, as PyTorch's undefined one)."""
    dims = _dims(dim, input._data.ndim)
    if p == 0:
        count = np.sum(input._data != 0, axis=dims, keepdims=keepdim)
        return flat(np.asarray(count).astype(input._data.dtype), Norm._node_name, input, undefined=True)
    return Norm.apply(input, dims, keepdim, float(p), p == 2 and in_lanes(input._data, dims, own_dtype))


def in_lanes(x: np.ndarray, dims: tuple, own_dtype: np.dtype) -> bool:
    """Whether PyTorch's 2-norm of ``x`` over ``dims`` takes its vectorised kernel
    (:func:`norm2_in_lanes`): float32/float64 in and out (``own_dtype``: the input's before
    a ``dtype=`` cast), reduced over the contiguous last dims."""
    dims = tuple(builtins.range(x.ndim)) if dims is None else dims
    trailing = sorted(d % x.ndim for d in dims) == list(builtins.range(x.ndim - len(dims), x.ndim))
    return x.dtype == own_dtype and x.dtype in (np.float32, np.float64) and x.flags.c_contiguous and trailing


def norm2_in_lanes(x: np.ndarray, dims: tuple) -> np.ndarray:
    """The 2-norm over the last dims ``dims`` (None: all; kept as size 1) in PyTorch's vectorised order
    (``kernels.reductions.lane_norms``)."""
    lead = x.shape[: x.ndim - (x.ndim if dims is None else len(dims))]
    out = lane_norms(x.reshape(math.prod(lead), math.prod(x.shape[len(lead) :])))
    return out.reshape(lead + (1,) * (x.ndim - len(lead)))


def check_norm_dtype(x: Tensor, dtype: Any) -> None:
    """PyTorch's refusals of a norm's ``dtype``: any for an input neither floating nor
    complex, a real one for a complex input and a complex one for a real input, or one that
    narrows the input's (float64 into float32)."""
    have, want = x._data.dtype, dtype.numpy
    if have.kind not in "fVc":
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {scalar_type_name(have)}"
        )
    if (have.kind == "c") != (want.kind == "c"):
        kind = "complex" if have.kind == "c" else "real"
        raise RuntimeError(
            f"linalg.vector_norm: dtype should be {kind} for {kind} inputs, but got {scalar_type_name(want)}"
        )
    if promote_types(x.dtype, dtype) != dtype:
        raise RuntimeError(
            f"linalg.vector_norm: the dtype of the input ({scalar_type_name(have)}) should be convertible "
            f"without narrowing to the specified dtype ({scalar_type_name(want)})"
        )


def _nuclear_norm(input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    """The sum of the singular values of the matrices over the two ``dim``."""
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) != 2 or input.dim() < 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
    d0, d1 = (wrap_dim(d, input.dim()) for d in dims)
    refuse_low_precision("linalg.matrix_norm", input._data.dtype)
    r = SVD.apply(input.movedim((d0, d1), (-2, -1)), False)[1].sum(-1)
    return r.unsqueeze(builtins.min(d0, d1)).unsqueeze(builtins.max(d0, d1)) if keepdim else r


# ---------------------------------------------------------------------- cumsum
class Cumsum(Function):
    """Running sum along ``dim``. The scans here split over the op's threads along the
    other dims (``kernels.reductions.scan_along``): each slice is summed whole, in order, by
    one thread, so the bits are the same for every thread count."""

    _raw = True
    _blas = True  # float16 accumulated in float32, each sum rounded, as PyTorch's scan kernel
    _backward_saves = {"dim": lambda ctx: ctx.dim}

    @staticmethod
    def forward(ctx, a, dim, dtype):
        x = a._data
        ctx.dim = dim
        out_dt = dtype.numpy if dtype is not None else (np.int64 if x.dtype.kind in "biu" else None)
        if x.ndim == 0:
            return x.astype(out_dt) if out_dt is not None else x.copy()
        return scan_along(lambda b: np.cumsum(b, axis=dim, dtype=out_dt), x, dim)

    @staticmethod
    def backward(ctx, g):
        return ReverseCumsum.apply(g, ctx.dim), None, None


class ReverseCumsum(Function):
    """Sums from the end of ``dim`` (the adjoint of cumsum)."""

    _raw = True
    _blas = True  # (as Cumsum)

    @staticmethod
    def forward(ctx, g, dim):
        x = g._data
        ctx.dim = dim
        if x.ndim == 0:
            return x.copy()
        return scan_along(lambda b: np.flip(np.cumsum(np.flip(b, dim), axis=dim), dim), x, dim)

    @staticmethod
    def backward(ctx, gg):
        return Cumsum.apply(gg, ctx.dim, None), None


def _refuse_bool_scan(kernel: str, dtype: Any) -> None:
    """PyTorch's ``NotImplementedError`` for a running sum or product asked in bool."""
    if dtype is not None and np.dtype(dtype.numpy) == np.bool_:
        raise kernel_error(kernel, np.dtype(np.bool_))


def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running sum along ``dim``; bool and integer inputs accumulate in int64."""
    _refuse_bool_scan("cumsum_out_cpu", dtype)
    return Cumsum.apply(input, wrap_dim(dim, input._data.ndim), dtype)


class Cumprod(Function):
    """Running product along ``dim``. The gradient is
    ``reverse_cumsum(g * out) / input`` before a slice's first zero; at that zero it is the
    same sum with the zero left out of the products; after it, 0 (no division by zero)."""

    _raw = True
    _backward_saves = {"self": saved(0), "dim": lambda ctx: ctx.dim, "result": kept("out", 0)}

    @staticmethod
    def forward(ctx, a, dim, dtype):
        x = a._data
        out_dt = dtype.numpy if dtype is not None else (np.int64 if x.dtype.kind in "biu" else None)
        if x.ndim == 0:
            out = x.astype(out_dt) if out_dt is not None else x.copy()
        else:
            out = scan_along(lambda b: np.cumprod(b, axis=dim, dtype=out_dt), x, dim)
        if ctx.needs_input_grad:
            ctx.save_for_backward(a)
            ctx.out, ctx.dim = out, dim
        return out

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx._checked_saved()
        x, dim = a._data, ctx.dim
        if x.ndim == 0:
            return g, None, None
        out = Cumprod.apply(a, dim, None) if recording() else Tensor._make(ctx.out)
        zero = _split(np.equal, x, 0)
        if x.dtype.kind == "c":  # holomorphic: the same formula with conjugates
            if zero.any():
                raise NotImplementedError(
                    "cumprod: the gradient of a complex input with zeros is not supported"
                )
            return ReverseCumsum.apply(g * out.conj(), dim) / a.conj(), None, None
        if not zero.any():
            return ReverseCumsum.apply(g * out, dim) / a, None, None
        if recording():  # differentiable again, also with respect to the zeros
            return _cumprod_grad_graph(a, g, dim), None, None
        zeros_so_far = scan_along(lambda b: np.cumsum(b, axis=dim), zero, dim)
        before = Tensor._make(zeros_so_far == 0)  # before the slice's first zero
        first = Tensor._make(zero & (zeros_so_far == 1))  # the first zero itself
        grad = where(before, ReverseCumsum.apply(g * out, dim) / where(before, a, 1.0), 0.0)
        skip = Cumprod.apply(where(first, 1.0, a), dim, None)  # products without that zero
        return where(first, ReverseCumsum.apply(g * skip, dim), grad), None, None


def _cumprod_grad_graph(a: Tensor, g: Tensor, dim: int) -> Tensor:
    """Cumprod's gradient as tensor ops, for a recorded backward of an input with zeros:
    ``grad[i] = sum_{k >= i} g[k] * prod_{j <= k, j != i} x[j]``, from the running products
    of each slice with element ``i`` replaced by 1 (n x n per slice, as :func:`prod`'s)."""
    shape, n = a._data.shape, a._data.shape[dim]
    rows = a.unsqueeze(dim).expand(shape[:dim] + (n,) + shape[dim:])  # rows[.., i, j, ..] = x[j]
    lead, tail = (1,) * dim, (1,) * (len(shape) - dim - 1)
    eye = np.eye(n, dtype=bool).reshape(lead + (n, n) + tail)
    others = Cumprod.apply(where(Tensor._make(eye), 1.0, rows), dim + 1, None)
    later = np.triu(np.ones((n, n), dtype=g._data.dtype)).reshape(lead + (n, n) + tail)  # k >= i
    return (g.unsqueeze(dim) * others * Tensor._make(later)).sum(dim + 1)


def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running product along ``dim``; bool and integer inputs multiply in int64. The
    gradient is exact where the input has zeros."""
    _refuse_bool_scan("cumprod_out_cpu", dtype)
    return Cumprod.apply(input, wrap_dim(dim, input._data.ndim), dtype)


class Diff(Function):
    """The ``n``-th forward difference along ``dim``. Its adjoint pads the gradient with
    ``n`` zeros at both ends and takes the ``n``-th difference again, times ``(-1)**n``."""

    _raw = True
    _node_name, _profiled_as = "SubBackward0", "aten::diff"  # PyTorch differences narrowed views

    @staticmethod
    def forward(ctx, a, n, dim):
        x = a._data
        ctx.shape, ctx.n, ctx.dim = x.shape, n, dim
        with np.errstate(over="ignore"):  # bools: differences are their xor, as PyTorch's
            return np.diff(x, n, axis=dim)

    @staticmethod
    def backward(ctx, g):
        n, dim = ctx.n, ctx.dim
        padded = ctx.shape[:dim] + (g._data.shape[dim] + 2 * n,) + ctx.shape[dim + 1 :]
        gx = Diff.apply(PadAlong.apply(g, padded, dim, n), n, dim)
        return (-gx if n % 2 else gx), None, None


def diff(
    input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None
) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``out[i] = input[i + 1] - input[i]``,
    applied ``n`` times), after joining ``prepend`` and ``append`` along ``dim``."""
    x = input._data
    if x.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    n = int_arg(n, "n")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, x.ndim)
    for name, extra in (("prepend", prepend), ("append", append)):
        if extra is None:
            continue
        if not isinstance(extra, Tensor):
            raise TypeError(f"diff(): argument '{name}' must be Tensor, not {type(extra).__name__}")
        e = extra._data
        if e.ndim != x.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for i in range(x.ndim):
            if i != d and e.shape[i] != x.shape[i]:
                raise RuntimeError(
                    f"diff expects the shape of tensor to prepend or append to "
                    f"match that of input except along the differencing "
                    f"dimension; input.size({i}) = {x.shape[i]}, but got "
                    f"tensor.size({i}) = {e.shape[i]}"
                )
    if prepend is not None or append is not None:
        joined = [t for t in (prepend, input, append) if t is not None]
        input = cat(joined, d)
    if n == 0:
        return input.clone()
    return Diff.apply(input, n, d)


# ---------------------------------------------------------------------- softmax
def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``exp(x_i) / sum_j exp(x_j)`` along ``dim``: :func:`disttorch.nn.functional.softmax`
    (``input`` is cast to ``dtype`` first if given)."""
    return _softmax(input, _softmax_dim_arg("softmax", dim), dtype=dtype)


def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``log(softmax(x))`` along ``dim``: :func:`disttorch.nn.functional.log_softmax`
    (``input`` is cast to ``dtype`` first if given)."""
    return _log_softmax(input, _softmax_dim_arg("log_softmax", dim), dtype=dtype)


def _softmax_dim_arg(name: str, dim: Any) -> int:
    """Unlike ``nn.functional``'s, the top-level softmax needs an explicit int ``dim``."""
    try:
        return int_arg(dim)  # (a 0-d integer tensor too)
    except TypeError:
        raise TypeError(
            f"{name}(): argument 'dim' (position 2) must be int, not {type(dim).__name__}"
        ) from None
