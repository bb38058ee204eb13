"""Shape ops: views (view/reshape, expand, transpose/permute, squeeze/unsqueeze, narrow,
split/chunk/unbind, movedim, unfold, meshgrid), copies (clone, contiguous, repeat, flip,
roll, tril/triu), joining (cat, stack) and ``sum_to``, the one helper that sums a broadcast
gradient back to an input's shape.

Views share memory and the version counter of their input, as in PyTorch (``_view = True``
on single-output view ops; multi-output views share it explicitly). Ops that PyTorch
defines as copies return fresh arrays even where NumPy could return a view.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, Sequence

import numpy as np

from .. import _native_warnings, _qtensor
from .._compile import _state as _compile_state
from .._creation import check_layout, int_sizes
from .._dtype import arrays_result_type
from .._dtype import dtype as _dtype_cls
from .._memory_format import (
    _ORDER,
    contiguous_format,
    empty_in_format,
    in_format,
    is_contiguous_as,
    preserve_format,
    suggest_memory_format,
)
from .._tensor import Tensor
from ..autograd import autocast_state
from ..autograd.function import NO_GRAD_VIEW_TAG, Function, log_view, mark_view, named_node
from ..kernels import threads
from ..utils import trace
from ._helpers import check_unique_dims, dim_ints, int_arg, wrap_dim
from .dtype_view import view_dtype

__all__ = [
    "reshape",
    "broadcast_to",
    "permute",
    "transpose",
    "swapaxes",
    "swapdims",
    "t",
    "unsqueeze",
    "squeeze",
    "flatten",
    "unflatten",
    "ravel",
    "movedim",
    "moveaxis",
    "narrow",
    "select",
    "split",
    "chunk",
    "unbind",
    "cat",
    "concat",
    "concatenate",
    "stack",
    "hstack",
    "vstack",
    "tile",
    "flip",
    "fliplr",
    "flipud",
    "roll",
    "tril",
    "triu",
    "clone",
    "diagonal",
    "diag",
    "tril_indices",
    "triu_indices",
    "meshgrid",
]

TENSOR_METHODS = (
    "_sum_to",
    "view",
    "reshape",
    "expand",
    "expand_as",
    "broadcast_to",
    "transpose",
    "swapaxes",
    "swapdims",
    "permute",
    "t",
    "view_as",
    "reshape_as",
    "squeeze",
    "unsqueeze",
    "flatten",
    "unflatten",
    "ravel",
    "movedim",
    "moveaxis",
    "narrow",
    "select",
    "chunk",
    "unbind",
    "repeat",
    "tile",
    "flip",
    "fliplr",
    "flipud",
    "roll",
    "tril",
    "triu",
    "clone",
    "contiguous",
    "diagonal",
    "diag",
    "unfold",
)


def _positional_or_keyword(op: str, args: tuple, name: str, value: Any) -> tuple:
    """The sizes of ``f(2, 3)``/``f((2, 3))``, or of ``f(name=(2, 3))`` (PyTorch accepts
    either form, not both)."""
    if value is None:
        return args
    if args:
        raise TypeError(f"{op}() got multiple values for argument '{name}'")
    return (value,)


def _shape_arg(shape: tuple) -> tuple:
    """Accept ``f(2, 3)`` and ``f((2, 3))`` alike."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return int_sizes(shape)


def _infer_shape(shape: tuple, numel: int) -> tuple:
    """Resolve one ``-1`` entry; raise PyTorch's error when the sizes do not fit."""
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _mark_views(outs: Sequence[Tensor], base: Tensor, op: str) -> tuple:
    """Mark the outputs of the multi-output view op ``op`` as views of ``base`` that may not
    be modified in place while recording (PyTorch's rule for ``unbind``, ``split``, ...)."""
    for o in outs:
        if o._base is None:
            mark_view(o, base)
        if o.__dict__.get("_view_creation") != NO_GRAD_VIEW_TAG:  # no_grad mode's tag comes first
            o._view_creation = ("multi", op)
    return tuple(outs)


def _log_views(outs: tuple, source: Tensor, remake: Callable[[Tensor], tuple]) -> tuple:
    """``outs``, each logged (while a compiled call runs) as the piece of ``remake(s)`` it is."""
    if _compile_state.views is not None:
        for i, o in enumerate(outs):
            log_view(o, source, lambda s, i=i: remake(s)[i])
    return outs


# ---------------------------------------------------------------------- views
class View(Function):
    """A view with a new shape (``shape`` already resolved and known to be viewable)."""

    _raw = True
    _view = True
    _backward_saves = {"self_sym_sizes": lambda ctx: ctx.in_shape}

    @staticmethod
    def forward(ctx, a, shape):
        x = a._data
        ctx.in_shape = x.shape
        return x.reshape(shape)

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.in_shape), None


class UnsafeView(View):
    """``reshape`` of a tensor whose strides allow no view: the result is a copy (split over
    the op's threads when large)."""

    _view = False

    @staticmethod
    def forward(ctx, a, shape):
        ctx.in_shape = a._data.shape
        return threads.copy(a._data).reshape(shape)


class Unsqueeze(View):
    """A view with a size-1 dim inserted: the other dims keep their strides, and the new
    one's is PyTorch's (the next dim's extent, 1 at the end), which NumPy's reshape of a
    non-contiguous array (or one with size-1 dims) may not give."""

    _backward_saves = {}  # PyTorch's saves the dim, which this node does not know

    @staticmethod
    def forward(ctx, a, shape, d):
        x = a._data
        ctx.in_shape = x.shape
        out = x.reshape(shape)
        if x.flags.c_contiguous and 1 not in x.shape:  # (NumPy's strides are PyTorch's)
            return out
        new = x.strides[d] * x.shape[d] if d < x.ndim else x.itemsize
        strides = x.strides[:d] + (new,) + x.strides[d:]
        return out if out.strides == strides else np.lib.stride_tricks.as_strided(x, shape, strides)

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.in_shape), None, None


class Squeeze(View):
    pass


class Expand(Function):
    _raw = True
    _view = True

    @staticmethod
    def forward(ctx, a, shape):
        x = a._data
        ctx.in_shape = x.shape
        full = expand_sizes(a.type(), x.shape, shape)
        return _expanded(x, full, len(shape) - x.ndim)

    @staticmethod
    def backward(ctx, g):
        return sum_to(g, ctx.in_shape), None


def expand_sizes(type_name: str, in_shape: tuple, shape: Any) -> list:
    """The sizes a tensor of ``in_shape`` (legacy type ``type_name``) expands to for ``shape``
    (``-1`` keeps a size), or PyTorch's error where it cannot."""
    if len(shape) < len(in_shape):
        raise RuntimeError(
            f"expand({type_name}{{{list(in_shape)}}}, size={list(shape)}): the "
            f"number of sizes provided ({len(shape)}) must be greater or equal "
            f"to the number of dimensions in the tensor ({len(in_shape)})"
        )
    lead = len(shape) - len(in_shape)
    full = []
    for i, s in enumerate(shape):
        if s == -1:
            if i < lead:
                raise RuntimeError(
                    f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}"
                )
            s = in_shape[i - lead]
        full.append(s)
    for i, n in enumerate(in_shape):
        if n != 1 and n != full[i + lead]:
            raise RuntimeError(
                f"The expanded size of the tensor ({full[i + lead]}) must match "
                f"the existing size ({n}) at non-singleton dimension "
                f"{i + lead}.  Target sizes: {list(shape)}.  Tensor sizes: "
                f"{list(in_shape)}"
            )
    return full


def _expanded(x: np.ndarray, full: list, lead: int) -> np.ndarray:
    """``x`` viewed with shape ``full`` and PyTorch's strides: a new leading dim of size 1
    strides over the dims after it, a dim stretched to more elements has stride 0. The view is
    writable unless it shows an element twice (a stretched dim), as a PyTorch expand only
    refuses writes that overlap."""
    strides = [0] * len(full)
    for i in range(len(full) - 1, -1, -1):
        if i < lead and full[i] == 1:
            strides[i] = full[i + 1] * strides[i + 1] if i + 1 < len(full) else x.itemsize
        elif i >= lead and x.shape[i - lead] == full[i]:
            strides[i] = x.strides[i - lead]
    repeats = any(st == 0 and n > 1 for st, n in zip(strides, full))
    return np.lib.stride_tricks.as_strided(
        x, tuple(full), tuple(strides), subok=True, writeable=x.flags.writeable and not repeats
    )


def _transposed_dims(ctx: Any) -> tuple:
    """The two dims a transpose swapped, read off its permutation."""
    moved = [i for i, d in enumerate(ctx.dims) if i != d]
    return tuple(moved) if moved else (0, 0)


def _permute_fields(ctx: Any) -> dict:
    """``PermuteBackward0`` saves ``dims``, ``TransposeBackward0`` ``dim0``/``dim1``;
    ``TBackward0`` nothing."""
    name = ctx.name()
    if name == "TransposeBackward0":
        return {"dim0": lambda ctx: _transposed_dims(ctx)[0], "dim1": lambda ctx: _transposed_dims(ctx)[1]}
    return {"dims": lambda ctx: tuple(ctx.dims)} if name == "PermuteBackward0" else {}


class Permute(Function):
    _raw = True
    _view = True
    _backward_saves = _permute_fields

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return a._data.transpose(dims)

    @staticmethod
    def backward(ctx, g):
        if ctx._node_name == "TBackward0":  # (as PyTorch's nodes do: a wrapper subclass sees aten.t)
            return g.t(), None
        return g.permute(tuple(np.argsort(ctx.dims))), None


class Transpose(Permute):
    pass


class Narrow(Function):
    """``input[..., start:start+length, ...]`` along ``dim``: a view."""

    _raw = True
    _view = True
    _node_name, _profiled_as = "SliceBackward0", "aten::narrow"

    @staticmethod
    def forward(ctx, a, dim, start, length):
        x = a._data
        ctx.shape, ctx.dim, ctx.start = x.shape, dim, start
        return x[(slice(None),) * dim + (slice(start, start + length),)]

    @staticmethod
    def backward(ctx, g):
        return _pad_along(g, ctx.shape, ctx.dim, ctx.start), None, None, None


class Select(Function):
    """``input[..., index, ...]`` along ``dim`` (the dim is removed): a view."""

    _raw = True
    _view = True

    @staticmethod
    def forward(ctx, a, dim, index):
        x = a._data
        ctx.shape, ctx.dim, ctx.index = x.shape, dim, index
        return x[(slice(None),) * dim + (index, Ellipsis)]

    @staticmethod
    def backward(ctx, g):
        return _pad_along(g.unsqueeze(ctx.dim), ctx.shape, ctx.dim, ctx.index), None, None


class Diagonal(Function):
    _raw = True
    _view = True

    @staticmethod
    def forward(ctx, a, offset, dim1, dim2):
        ctx.shape, ctx.args = a._data.shape, (offset, dim1, dim2)
        out = np.diagonal(a._data, offset, dim1, dim2)
        out.flags.writeable = a._data.flags.writeable  # NumPy marks it read-only; PyTorch's is not
        return out

    @staticmethod
    def backward(ctx, g):
        return DiagEmbed.apply(g, ctx.shape, *ctx.args), None, None, None


class DiagEmbed(Function):
    """Zeros with ``g`` on a diagonal: the adjoint of ``diagonal``, and ``diag`` of a vector."""

    _raw = True

    @staticmethod
    def forward(ctx, g, shape, offset, dim1, dim2):
        ctx.args = (offset, dim1, dim2)
        out = np.zeros(shape, dtype=g._data.dtype)
        diag = np.diagonal(out, offset, dim1, dim2)
        diag.flags.writeable = True  # a writable view of out's diagonal
        diag[...] = g._data
        return out

    @staticmethod
    def backward(ctx, gg):
        return Diagonal.apply(gg, *ctx.args), None, None, None, None


class PadAlong(Function):
    """Zeros of ``shape`` with ``g`` placed at ``start`` along ``dim`` (adjoint of narrow)."""

    _raw = True

    @staticmethod
    def forward(ctx, g, shape, dim, start):
        length = g._data.shape[dim]
        ctx.dim, ctx.start, ctx.length = dim, start, length
        out = np.zeros(shape, dtype=g._data.dtype)
        out[(slice(None),) * dim + (slice(start, start + length),)] = g._data
        return out

    @staticmethod
    def backward(ctx, gg):
        return Narrow.apply(gg, ctx.dim, ctx.start, ctx.length), None, None, None


def _pad_along(g: Tensor, shape: tuple, dim: int, start: int) -> Tensor:
    return PadAlong.apply(g, shape, dim, start)


class Split(Function):
    """Views of consecutive pieces of ``input`` along ``dim`` (sizes given)."""

    _raw = True

    @staticmethod
    def forward(ctx, a, sizes, dim):
        x = a._data
        ctx.dim = dim
        pre = (slice(None),) * dim
        outs, start = [], 0
        for s in sizes:
            outs.append(x[pre + (slice(start, start + s),)])
            start += s
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        return cat(grads, ctx.dim), None, None


class Unbind(Function):
    """Views of each slice of ``input`` along ``dim`` (the dim removed)."""

    _raw = True

    @staticmethod
    def forward(ctx, a, dim):
        x = a._data
        ctx.dim = dim
        pre = (slice(None),) * dim
        return tuple(x[pre + (i, Ellipsis)] for i in range(x.shape[dim]))

    @staticmethod
    def backward(ctx, *grads):
        return stack(grads, ctx.dim), None


class Unfold(Function):
    """Windows of ``size`` elements every ``step`` along ``dim`` (a new last dim): a view."""

    _raw = True
    _view = True

    @staticmethod
    def forward(ctx, a, dim, size, step):
        x = a._data
        ctx.shape, ctx.args = x.shape, (dim, size, step)
        windows = np.lib.stride_tricks.sliding_window_view(x, size, axis=dim, writeable=step >= size)
        return windows[(slice(None),) * dim + (slice(None, None, step),)]

    @staticmethod
    def backward(ctx, g):
        return UnfoldBackward.apply(g, ctx.shape, *ctx.args), None, None, None


class UnfoldBackward(Function):
    """Sum each window's gradient back onto the elements it covers (adjoint of unfold)."""

    _raw = True

    @staticmethod
    def forward(ctx, g, shape, dim, size, step):
        ctx.args = (dim, size, step)
        out = np.zeros(shape, dtype=g._data.dtype)
        n_windows = g._data.shape[dim]
        pre = (slice(None),) * dim
        for k in range(size):  # one strided slab per position inside the window
            out[pre + (slice(k, k + step * (n_windows - 1) + 1, step),)] += g._data[..., k]
        return out

    @staticmethod
    def backward(ctx, gg):
        return Unfold.apply(gg, *ctx.args), None, None, None, None


# ---------------------------------------------------------------------- copies
class Clone(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, memory_format=None):
        return in_format(a._data, memory_format, copy=True)

    @staticmethod
    def backward(ctx, g):
        return g, None


def _join_dtype(arrays: Sequence[np.ndarray]) -> np.dtype:
    """PyTorch's promotion across joined tensors (all of them dimensioned: int64 with float32
    gives float32, float64 with complex64 gives complex128)."""
    first = arrays[0].dtype
    if all(a.dtype == first for a in arrays):
        return first
    return arrays_result_type([np.atleast_1d(a) for a in arrays])


class Cat(Function):
    """Concatenation of the tensors after ``dim`` along ``dim``."""

    _raw = True

    @staticmethod
    def forward(ctx, dim, *tensors):
        arrays = [t._data for t in tensors]
        out = threads.concatenate(arrays, dim, _join_dtype(arrays))  # raises first on bad shapes
        ctx.dim, ctx.sizes = dim, [a.shape[dim] for a in arrays]
        if not out.flags.c_contiguous and not _all_channels_last(arrays):
            out = np.ascontiguousarray(out)  # NumPy follows the inputs' dim order; PyTorch's
        return out  # result is row-major unless every input is channels-last (then so is it)

    @staticmethod
    def backward(ctx, g):
        return (None,) + tuple(split(g, ctx.sizes, ctx.dim))


def _all_channels_last(arrays: list) -> bool:
    """Whether ``cat`` keeps a channels-last layout: every input suggests the same
    channels-last format (PyTorch's ``compute_output_memory_format``)."""
    formats = {suggest_memory_format(a) for a in arrays}
    return len(formats) == 1 and contiguous_format not in formats


class Stack(Function):
    """The tensors after ``dim`` stacked along a new dimension ``dim``."""

    _raw = True

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim = dim
        arrays = [t._data for t in tensors]
        out = _stacked_empty(arrays, dim, _join_dtype(arrays))
        return np.stack(arrays, axis=dim, out=out, casting="unsafe")

    @staticmethod
    def backward(ctx, g):
        return (None,) + tuple(unbind(g, ctx.dim))


def _stacked_empty(arrays: list, dim: int, dtype: np.dtype) -> np.ndarray:
    """The result of ``stack(arrays, dim)`` before it is filled, laid out as PyTorch's: its
    ``stack`` is ``cat`` along ``dim`` viewed with the new dim split off (``cat`` of the inputs
    unsqueezed for a new last dim), so row-major unless ``cat`` keeps a channels-last layout
    (every input channels-last): then the new dim sits just outside ``dim`` in memory."""
    shape = arrays[0].shape[:dim] + (len(arrays),) + arrays[0].shape[dim:]
    if dim == arrays[0].ndim or not _all_channels_last(arrays):
        return np.empty(shape, dtype)
    order = [d + (d >= dim) for d in _ORDER[suggest_memory_format(arrays[0])._name][1]]
    order.insert(order.index(dim + 1), dim)  # (outermost first)
    return np.empty(tuple(shape[d] for d in order), dtype).transpose(np.argsort(order))


class Repeat(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, repeats):
        x = a._data
        shape = (1,) * (len(repeats) - x.ndim) + x.shape
        if any(r < 0 for r in repeats):
            out = [s * r for s, r in zip(shape, repeats)]
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {out}")
        ctx.in_shape, ctx.shape, ctx.repeats = x.shape, shape, repeats
        return np.tile(x.reshape(shape), repeats)

    @staticmethod
    def backward(ctx, g):
        # out dim d holds repeats[d] copies of shape[d]: split it in two and sum the copies.
        split_shape = []
        for r, s in zip(ctx.repeats, ctx.shape):
            split_shape += [r, s]
        summed = g.reshape(tuple(split_shape)).sum(tuple(range(0, len(split_shape), 2)))
        return summed.reshape(ctx.in_shape), None


class Flip(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return np.flip(a._data, dims).copy()

    @staticmethod
    def backward(ctx, g):
        return Flip.apply(g, ctx.dims), None


class Roll(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        x = a._data
        if dims is None:
            return np.roll(x.reshape(-1), shifts).reshape(x.shape)
        if x.size == 0:
            return in_format(x, preserve_format, copy=True)  # (PyTorch's: a clone)
        return in_format(np.roll(x, shifts, dims), _roll_format(x, shifts, dims))

    @staticmethod
    def backward(ctx, g):
        neg = tuple(-s for s in ctx.shifts) if isinstance(ctx.shifts, tuple) else -ctx.shifts
        return Roll.apply(g, neg, ctx.dims), None, None


def _roll_format(x: np.ndarray, shifts: tuple, dims: tuple) -> Any:
    """The layout of PyTorch's ``roll`` of ``x`` along ``dims``: each dim's roll is ``cat`` of
    the two pieces ``narrow`` cuts, row-major unless both pieces suggest a channels-last
    layout (a shift that is a multiple of the size leaves one piece empty: row-major)."""
    fmt = contiguous_format
    if x.ndim not in (4, 5):
        return fmt  # (only a 4-d or 5-d tensor suggests a channels-last layout)
    for shift, d in zip(shifts, dims):
        start = (x.shape[d] - shift) % x.shape[d]
        pieces = [x[(slice(None),) * d + (slice(start, None),)], x[(slice(None),) * d + (slice(0, start),)]]
        fmt = suggest_memory_format(pieces[0]) if _all_channels_last(pieces) else contiguous_format
        x = empty_in_format(x.shape, np.uint8, fmt)  # (only its strides are read: never filled)
    return fmt


class Tril(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, diagonal):
        ctx.diagonal = diagonal
        return threads.row_major(np.tril(a._data, diagonal))  # (row-major, as PyTorch's)

    @staticmethod
    def backward(ctx, g):
        return Tril.apply(g, ctx.diagonal), None


class Triu(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, diagonal):
        ctx.diagonal = diagonal
        return threads.row_major(np.triu(a._data, diagonal))  # (row-major, as PyTorch's)

    @staticmethod
    def backward(ctx, g):
        return Triu.apply(g, ctx.diagonal), None


# ---------------------------------------------------------------------- sum_to
def sum_to(g: Tensor, shape: tuple) -> Tensor:
    """Sum ``g`` over the dims that broadcasting added or stretched, giving ``shape``."""
    if g._data.shape == tuple(shape):
        return g
    lead = g._data.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and g._data.shape[i + lead] != 1
    )
    out = g.sum(dims, keepdim=True) if dims else g
    return out.reshape(tuple(shape)) if lead or out._data.shape != tuple(shape) else out


_sum_to = sum_to


# ---------------------------------------------------------------------- public functions
def _viewable(x: np.ndarray, shape: tuple) -> bool:
    if x.flags.c_contiguous:
        return True
    try:
        np.reshape(x, shape, copy=False)
    except ValueError:
        return False
    return True


def reshape(input: Tensor, *sizes: Any, shape: Sequence[int] | None = None) -> Tensor:
    """Same data in a new shape (``reshape(2, 3)``, ``reshape((2, 3))`` or
    ``reshape(shape=(2, 3))``): a view when the strides allow it, else a copy. One dim may be
    -1 (inferred)."""
    sizes = _positional_or_keyword("reshape", sizes, "shape", shape)
    new = _infer_shape(_shape_arg(sizes), input._data.size)
    if _viewable(input._data, new):
        return View.apply(input, new)
    return UnsafeView.apply(input, new)


def view(
    input: Tensor, *shape: Any, size: Sequence[int] | None = None, dtype: _dtype_cls | None = None
) -> Tensor:
    """A view with a new shape (``view(2, 3)``, ``view((2, 3))`` or ``view(size=(2, 3))``);
    raises when the strides do not allow one (use reshape). ``view(dtype)`` (or
    ``view(dtype=...)``) reads the same bytes as another dtype (see ``dtype_view``)."""
    if len(shape) == 1 and isinstance(shape[0], _dtype_cls) and size is None and dtype is None:
        shape, dtype = (), shape[0]
    if dtype is not None or any(isinstance(s, _dtype_cls) for s in shape):
        if shape or size is not None or not isinstance(dtype, _dtype_cls):
            raise TypeError(
                "view() received an invalid combination of arguments: expected one of "
                "(torch.dtype dtype) or (tuple of ints size)"
            )
        return view_dtype(input, dtype)
    shape = _positional_or_keyword("view", shape, "size", size)
    new = _infer_shape(_shape_arg(shape), input._data.size)
    if not _viewable(input._data, new):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at "
            "least one dimension spans across two contiguous subspaces). Use "
            ".reshape(...) instead."
        )
    return View.apply(input, new)


def view_as(input: Tensor, other: Tensor) -> Tensor:
    """``input.view(other.shape)``."""
    return view(input, other._data.shape)


def reshape_as(input: Tensor, other: Tensor) -> Tensor:
    """``input.reshape(other.shape)``."""
    return reshape(input, other._data.shape)


def expand(input: Tensor, *sizes: Any, size: Sequence[int] | None = None) -> Tensor:
    """A broadcast view to ``sizes`` (or ``size=``; -1 keeps a dim); no memory is copied."""
    return Expand.apply(input, _shape_arg(_positional_or_keyword("expand", sizes, "size", size)))


def expand_as(input: Tensor, other: Tensor) -> Tensor:
    """``input.expand(other.shape)``."""
    return Expand.apply(input, other._data.shape)


def broadcast_to(input: Tensor, size: Sequence[int]) -> Tensor:
    """``input.expand(size)``."""
    return Expand.apply(input, _shape_arg((size,)))


def permute(input: Tensor, *args: Any, dims: Sequence[int] | None = None) -> Tensor:
    """A view with dims reordered (``permute(1, 0)``, ``permute((1, 0))`` or
    ``permute(dims=(1, 0))``)."""
    dims = _shape_arg(_positional_or_keyword("permute", args, "dims", dims))
    nd = input._data.ndim
    if len(dims) != nd:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not "
            f"match the length of the desired ordering of dimensions i.e. input.dim() "
            f"= {nd} is not equal to len(dims) = {len(dims)}"
        )
    dims = tuple(wrap_dim(d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return Permute.apply(input, dims)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """A view with ``dim0`` and ``dim1`` swapped."""
    nd = input._data.ndim
    order = list(range(nd))
    d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    if nd == 0:
        return View.apply(input, ())
    order[d0], order[d1] = order[d1], order[d0]
    return Transpose.apply(input, tuple(order))


swapdims = transpose


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """NumPy's name for :func:`transpose` (``axis0``, ``axis1``)."""
    return transpose(input, axis0, axis1)


def _matrix_transpose(input: Tensor) -> Tensor:
    """``input.mT``: the last two dims swapped."""
    if input._data.ndim < 2:
        raise RuntimeError(
            f"tensor.mT is only supported on matrices or batches of matrices. Got "
            f"{input._data.ndim}-D tensor."
        )
    return transpose(input, -2, -1)


def _reversed_dims(input: Tensor) -> Tensor:
    """``input.T``: the dims reversed; PyTorch warns (once) on other than 2-D tensors."""
    ndim = input._data.ndim
    if ndim == 0:
        _native_warnings.warn(
            "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases. "
            "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4321.)",
            once=True,
        )
    elif ndim != 2:
        _native_warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
            "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
            "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
            "tensor. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4314.)",
            once=True,
        )
    return permute(input, tuple(reversed(range(ndim))))


def t(input: Tensor) -> Tensor:
    """Transpose of a tensor with at most 2 dims."""
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input._data.ndim}D")
    out = transpose(input, 0, 1) if input._data.ndim == 2 else View.apply(input, input._data.shape)
    return named_node(out, "TBackward0")


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """A view with a size-1 dim inserted at ``dim``."""
    shape = input._data.shape
    d = wrap_dim(dim, len(shape) + 1)
    return Unsqueeze.apply(input, shape[:d] + (1,) + shape[d:], d)


def unsqueezed_shape(shape: tuple, dim: int) -> tuple:
    """The shape ``unsqueeze(dim)`` gives a tensor of ``shape``."""
    d = wrap_dim(dim, len(shape) + 1)
    return shape[:d] + (1,) + shape[d:]


def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """A view without size-1 dims (all of them, or those in ``dim`` that have size 1)."""
    out = Squeeze.apply(input, squeezed_shape(input._data.shape, dim))
    if dim is None:
        return out
    return named_node(out, "SqueezeBackward1" if isinstance(dim, (int, np.integer)) else "SqueezeBackward2")


def squeezed_shape(shape: tuple, dim: Any = None) -> tuple:
    """The shape ``squeeze(dim)`` gives a tensor of ``shape``."""
    if dim is None:
        dims = {i for i, s in enumerate(shape) if s == 1}
    else:
        ds = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
        wrapped = tuple(wrap_dim(d, len(shape)) for d in dim_ints(ds))
        check_unique_dims(wrapped)
        dims = {d for d in wrapped if shape and shape[d] == 1}
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims ``start_dim..end_dim`` into one (a view when possible)."""
    new = flattened_shape(input._data.shape, start_dim, end_dim)
    if not trace.profiling():
        return input if new is None else reshape(input, new)
    with trace.span("aten::flatten", "cpu_op"):  # a profiler lists it over its view, as PyTorch's
        return input if new is None else reshape(input, new)


def flattened_shape(shape: tuple, start_dim: int, end_dim: int) -> tuple | None:
    """The shape ``flatten(start_dim, end_dim)`` gives a tensor of ``shape`` (None: unchanged)."""
    if not shape:  # (the dims are checked as those of a 1-D tensor)
        wrap_dim(start_dim, 0), wrap_dim(end_dim, 0)
        return (1,)
    s, e = wrap_dim(start_dim, len(shape)), wrap_dim(end_dim, len(shape))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return None
    n = 1
    for d in shape[s : e + 1]:
        n *= d
    return shape[:s] + (n,) + shape[e + 1 :]


def ravel(input: Tensor) -> Tensor:
    """The elements as a 1-D tensor (a view when possible)."""
    return reshape(input, (-1,))


def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Split dim ``dim`` into ``sizes`` (one may be -1)."""
    return reshape(input, unflattened_shape(input._data.shape, dim, sizes))


def unflattened_shape(shape: tuple, dim: int, sizes: Sequence[int]) -> tuple:
    """The shape ``unflatten(dim, sizes)`` gives a tensor of ``shape``."""
    d = wrap_dim(dim, len(shape))
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        sizes = _infer_shape(sizes, shape[d])
    except RuntimeError:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size "
            f"of dim {dim} ({shape[d]}) in the input tensor"
        ) from None
    return shape[:d] + sizes + shape[d + 1 :]


def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    """A view with dims ``source`` moved to positions ``destination``."""
    nd = input._data.ndim
    src = [source] if isinstance(source, (int, np.integer)) else list(source)
    dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({src} dims) "
            f"should contain the same number of dims as destination ({dst} dims)"
        )
    src = [wrap_dim(d, nd) for d in src]
    dst = [wrap_dim(d, nd) for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise RuntimeError("movedim: repeated dim in `source` or `destination`")
    if nd == 0:  # a scalar's dim 0 (or -1) stays where it is
        return Permute.apply(input, ())
    order = [d for d in range(nd) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return Permute.apply(input, tuple(order))


moveaxis = movedim


def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """A view of ``length`` elements along ``dim`` starting at ``start``."""
    shape = input._data.shape
    if not shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, len(shape))
    start = int(start)
    if not -shape[d] <= start <= shape[d]:
        raise IndexError(
            f"start out of range (expected to be in range of [{-shape[d]}, {shape[d]}], but got {start})"
        )
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start < 0:
        start += shape[d]
    if start + length > shape[d]:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({shape[d]}).")
    return Narrow.apply(input, d, start, int(length))


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """A view of slice ``index`` along ``dim`` (the dim is removed)."""
    shape = input._data.shape
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, len(shape))
    if not isinstance(index, (int, np.integer, Tensor)):
        raise TypeError(f"select(): argument 'index' must be int, not {type(index).__name__}")
    i = int(index)
    if not -shape[d] <= i < shape[d]:
        raise IndexError(
            f"select(): index {i} out of range for tensor of size {list(shape)} at dimension {d}"
        )
    return Select.apply(input, d, i + shape[d] if i < 0 else i)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """A view of the diagonal over ``dim1`` and ``dim2`` (appended as the last dim)."""
    nd = input._data.ndim
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return Diagonal.apply(input, int(offset), d1, d2)


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """A view of all windows of ``size`` elements, ``step`` apart, along ``dimension``
    (which becomes the window count; the window is a new last dim)."""
    shape = input._data.shape
    d = wrap_dim(dimension, len(shape))
    n = shape[d] if shape else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if not shape:
        return View.apply(input, (1,))
    return Unfold.apply(input, d, int(size), int(step))


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """For a 1-D input, a square matrix with it on diagonal ``diagonal``; for a 2-D input,
    a copy of that diagonal as 1-D."""
    nd = input._data.ndim
    k = int(diagonal)
    if nd == 1:
        n = input._data.shape[0] + abs(k)
        return DiagEmbed.apply(input, (n, n), k, 0, 1)
    if nd == 2:
        return named_node(Clone.apply(Diagonal.apply(input, k, 0, 1)), "DiagonalBackward0_copy")
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")


def _tri_indices(lower: bool, row: int, col: int, offset: int, dtype: Any) -> Tensor:
    rows, cols = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
    np_dt = np.int64 if dtype is None else dtype.numpy
    return Tensor._make(np.stack([rows, cols]).astype(np_dt))


def tril_indices(
    row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None, layout: Any = None
) -> Tensor:
    """The ``(2, N)`` coordinates of the lower triangle of a ``row x col`` matrix."""
    check_layout("tril_indices", layout)
    return _tri_indices(True, row, col, offset, dtype)


def triu_indices(
    row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None, layout: Any = None
) -> Tensor:
    """The ``(2, N)`` coordinates of the upper triangle of a ``row x col`` matrix."""
    check_layout("triu_indices", layout)
    return _tri_indices(False, row, col, offset, dtype)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple:
    """Coordinate grids from 0-D or 1-D tensors (given one by one or as one list): the
    ``i``-th output holds ``tensors[i]`` along dim ``i`` (``indexing='ij'``), or with the
    first two dims swapped (``'xy'``, Cartesian). Without ``indexing`` it is ``'ij'``, with
    PyTorch's warning. The outputs are expanded views of the inputs (gradients are summed
    back over the grid)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument. "
            "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4215.)",
            UserWarning,
            stacklevel=1,  # PyTorch's is raised in its own functional.py, not at the caller's line
        )
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if any(t._data.dtype != tensors[0]._data.dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                f"got a tensor of shape {list(t._data.shape)}"
            )
    n = len(tensors)
    place = list(range(n))  # the output dim each input runs along
    if indexing == "xy" and n > 1:
        place[0], place[1] = 1, 0
    shape = [0] * n
    for t, p in zip(tensors, place):
        shape[p] = t._data.size
    return tuple(
        reshape(t, [shape[p] if k == p else 1 for k in range(n)]).expand(shape)
        for t, p in zip(tensors, place)
    )


def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple:
    """Views of consecutive pieces along ``dim``: pieces of ``split_size`` (the last may be
    smaller), or of the sizes in a list."""
    d, sizes = split_sizes(tensor._data.shape, split_size_or_sections, dim)
    op = split_kind(split_size_or_sections)
    if len(sizes) == 1:
        return _mark_views((Narrow.apply(tensor, d, 0, sizes[0]),), tensor, op)
    out = _mark_views(Split.apply(tensor, tuple(sizes), d), tensor, op)
    out = out if op == "Split" else named_node(out, "SplitWithSizesBackward0")
    return _log_views(out, tensor, lambda s: split(s, split_size_or_sections, dim))


def split_kind(split_size_or_sections: Any) -> str:
    """PyTorch's op for a split: ``Split`` by one size, ``SplitWithSizes`` by a list of sizes."""
    return "Split" if isinstance(split_size_or_sections, (int, np.integer)) else "SplitWithSizes"


def split_sizes(shape: tuple, split_size_or_sections: Any, dim: int) -> tuple[int, list[int]]:
    """``split``'s dimension (non-negative) and pieces' sizes for a tensor of ``shape``."""
    if not shape:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, len(shape))
    n = shape[d]
    if isinstance(split_size_or_sections, (int, np.integer)):
        size = int_arg(split_size_or_sections, "split_size")
        if size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
        if size == 0:
            if n != 0:
                raise RuntimeError(
                    f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
                )
            sizes = [0]
        else:
            sizes = [size] * (n // size) + ([n % size] if n % size else []) or [
                0
            ]  # (an empty dim: one empty piece)
    else:
        sizes = [int_arg(s, "split_sizes") for s in split_size_or_sections]
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                f"tensor's size at dimension {d}), but got split_sizes={sizes}"
            )
    return d, sizes


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """Split into ``chunks`` pieces of ``ceil(size / chunks)`` (possibly fewer pieces)."""
    return split(input, chunk_split_arg(input._data.shape, chunks, dim), dim)


def chunk_split_arg(shape: tuple, chunks: int, dim: int) -> Any:
    """The ``split`` argument that ``chunk(chunks, dim)`` amounts to for a tensor of ``shape``."""
    chunks = int_arg(chunks, "chunks")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if not shape:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    n = shape[wrap_dim(dim, len(shape))]
    return max(-(-n // chunks), 1) if n else [0] * chunks


def unbind(input: Tensor, dim: int = 0) -> tuple:
    """Views of every slice along ``dim``, with that dim removed."""
    d = wrap_dim(dim, input._data.ndim, has_dims=True)
    if input._data.shape[d] == 1:
        out = _mark_views((Select.apply(input, d, 0),), input, "Unbind")
    else:
        out = _mark_views(Unbind.apply(input, d), input, "Unbind")
    return _log_views(out, input, lambda s: unbind(s, dim))


def _check_join(tensors: Sequence[Tensor], op: str) -> list:
    if isinstance(tensors, Tensor):
        raise TypeError(f"{op}(): argument 'tensors' must be tuple of Tensors, not Tensor")
    tensors = list(tensors)
    if not tensors:  # PyTorch's cat raises ValueError; the stacking functions RuntimeError
        if op == "torch.cat":
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return tensors


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenate tensors of equal shape except in ``dim``; dtypes are promoted. 1-D empty
    tensors are skipped, as in PyTorch."""
    tensors = _check_join(tensors, "torch.cat")
    if autocast_state._state.active is not None:
        tensors = autocast_state.promoted_list(tensors)
    if tensors[0].is_quantized:
        return _qtensor.cat(tensors, dim)
    for i, t in enumerate(tensors):
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    kept = [t for t in tensors if t._data.shape != (0,)]
    if not kept:
        return Clone.apply(tensors[0])
    d = wrap_dim(dim, kept[0]._data.ndim)
    try:
        return Cat.apply(d, *kept)
    except (ValueError, np.exceptions.AxisError):
        raise _cat_error(tensors, d) from None


def _cat_error(tensors: list, d: int) -> RuntimeError:
    """PyTorch's message for tensors that cannot be concatenated along ``d``."""
    ref = next(t._data.shape for t in tensors if t._data.shape != (0,))
    for i, t in enumerate(tensors):
        s = t._data.shape
        if s == (0,):
            continue
        if len(s) != len(ref):
            return RuntimeError(f"Tensors must have same number of dimensions: got {len(ref)} and {len(s)}")
        for k in range(len(ref)):
            if k != d and s[k] != ref[k]:
                return RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. "
                    f"Expected size {ref[k]} but got size {s[k]} for tensor "
                    f"number {i} in the list."
                )
    return RuntimeError(
        f"torch.cat(): cannot concatenate shapes {[list(t._data.shape) for t in tensors]} along dimension {d}"
    )


concat = concatenate = cat


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Stack tensors of equal shape along a new dimension ``dim``."""
    tensors = _check_join(tensors, "stack")
    if autocast_state._state.active is not None:
        tensors = autocast_state.promoted_list(tensors)
    s0 = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != s0:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(s0)} at "
                f"entry 0 and {list(t._data.shape)} at entry {i}"
            )
    return Stack.apply(wrap_dim(dim, len(s0) + 1), *tensors)


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate along dim 1 (dim 0 for 1-D tensors)."""
    tensors = _check_join(tensors, "hstack")
    return cat(tensors, 0 if tensors[0]._data.ndim <= 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate along dim 0, treating 1-D tensors as rows."""
    tensors = _check_join(tensors, "vstack")
    return cat([t.unsqueeze(0) if t._data.ndim <= 1 else t for t in tensors], 0)


def repeat(input: Tensor, *sizes: Any, repeats: Sequence[int] | None = None) -> Tensor:
    """Tile ``input`` ``sizes[d]`` (or ``repeats[d]``) times along each dim (a copy)."""
    sizes = _shape_arg(_positional_or_keyword("repeat", sizes, "repeats", repeats))
    if len(sizes) < input._data.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    return Repeat.apply(input, sizes)


def tile(input: Tensor, *reps: Any, dims: Sequence[int] | None = None) -> Tensor:
    """Like ``repeat``, with missing leading repetitions taken as 1; ``x.tile(2, 1)``,
    ``x.tile((2, 1))`` or ``x.tile(dims=(2, 1))``."""
    dims = _shape_arg(_positional_or_keyword("tile", reps, "dims", dims))
    return Repeat.apply(input, (1,) * (input._data.ndim - len(dims)) + dims)


def flip(input: Tensor, dims: Any) -> Tensor:
    """Reverse the order of elements along ``dims`` (a copy)."""
    nd = input._data.ndim
    if dims is None or isinstance(dims, (int, np.integer)):
        raise TypeError(f"flip(): argument 'dims' must be tuple of ints, not {type(dims).__name__}")
    ds = tuple(wrap_dim(d, nd) for d in dim_ints(dims))
    if nd == 0:  # a scalar's dim 0 (or -1) is its one element: nothing to reverse
        ds = ()
    check_unique_dims(ds)
    return Flip.apply(input, ds)


def fliplr(input: Tensor) -> Tensor:
    """Flip along dim 1."""
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input: Tensor) -> Tensor:
    """Flip along dim 0."""
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """Shift elements cyclically by ``shifts`` along ``dims`` (flattened when None)."""
    if dims is None:
        if not isinstance(shifts, (int, np.integer)) and len(shifts) != 1:
            raise RuntimeError(
                f"roll: shifts (length {len(shifts)}) and dims (length 0) must have the same length"
            )
        s = shifts if isinstance(shifts, (int, np.integer)) else shifts[0]
        return Roll.apply(input, int_arg(s, "shifts"), None)
    sh = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    ds = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if len(sh) != len(ds):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(ds)}")
    nd = input._data.ndim
    return Roll.apply(
        input, tuple(int_arg(s, "shifts") for s in sh), tuple(wrap_dim(d, nd, has_dims=True) for d in ds)
    )


def _check_matrix(input: Tensor, name: str) -> None:
    if input._data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle (on and below diagonal ``diagonal``) of the last two dims."""
    _check_matrix(input, "tril")
    return Tril.apply(input, int(diagonal))


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle (on and above diagonal ``diagonal``) of the last two dims."""
    _check_matrix(input, "triu")
    return Triu.apply(input, int(diagonal))


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """A copy of ``input`` with its own memory; gradients flow back to ``input``.
    ``memory_format`` (default ``torch.preserve_format``: the strides of a dense ``input``)
    chooses the copy's layout."""
    return Clone.apply(input, memory_format)


def contiguous(input: Tensor, memory_format: Any = None) -> Tensor:
    """``input`` itself when contiguous in ``memory_format`` (default row-major), else a
    copy laid out so (differentiable)."""
    fmt = contiguous_format if memory_format is None else memory_format
    if fmt is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if is_contiguous_as(input._data, fmt):
        return input
    return Clone.apply(input, fmt)


def _split_method(self: Tensor, split_size: Any, dim: int = 0) -> tuple:
    """``Tensor.split(split_size, dim=0)``: :func:`split` under the method's argument name."""
    return split(self, split_size, dim)


def _flip_method(self: Tensor, *dims: Any, **kwargs: Any) -> Tensor:
    """``t.flip(dims)``, ``t.flip(dims=dims)``, or ``t.flip(0, 1)`` with the dims as arguments
    (as PyTorch's)."""
    if kwargs:
        return flip(self, *dims, **kwargs)
    if not dims:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    return flip(self, dims[0] if len(dims) == 1 and not isinstance(dims[0], (int, np.integer)) else dims)


TENSOR_OPERATORS = {"split": _split_method, "flip": _flip_method}
