"""Indexing: ``tensor[index]`` with ints, slices, None, Ellipsis, boolean masks and integer
tensors or lists; the write ``CopySlices`` behind ``tensor[index] = value``; and the
index-driven ops ``gather, scatter_add, index_select, index_add, index_fill, index_put,
masked_fill, masked_select, take, take_along_dim, nonzero`` (``scatter`` itself, whose
``reduce=`` needs the reducing scatter, lives in ``scatter_reduce``).

Reads with basic indices are views. The backward of a read puts the gradient back into
zeros of the input's shape, accumulating where an integer index repeats (a weighted
``np.bincount`` over flat positions, much faster than ``np.add.at``).
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np

from .. import _native_warnings
from .._dtype import c_type_name, checked_scalar, scalar_type_name
from .._tensor import Tensor
from ..autograd.function import Function, named_node
from ..autograd.grad_mode import forward_mode_pass
from ..kernels.threads import row_major
from ._helpers import broadcast_error, scalar_as_vector, wrap_dim
from .as_strided import writable_alias
from .dtype_rules import require_source_dtype
from .shape import Select, expand_sizes

__all__ = [
    "gather",
    "scatter_add",
    "index_select",
    "index_add",
    "index_fill",
    "index_put",
    "masked_fill",
    "masked_select",
    "take",
    "take_along_dim",
    "nonzero",
    "argwhere",
]

TENSOR_METHODS = (
    "__getitem__",
    "gather",
    "scatter_add",
    "index_select",
    "index_add",
    "index_fill",
    "index_put",
    "masked_fill",
    "masked_select",
    "take",
    "take_along_dim",
    "nonzero",
    "argwhere",
)

_BASIC = (int, slice, np.integer)


#: the dtypes of index tensors, as PyTorch's: int64, int32, uint8 (a mask) and bool
_INDEX_TYPES = frozenset((("i", 8), ("i", 4), ("u", 1), ("b", 1)))


def _np_index(index: Any) -> Any:
    """Turn tensors and lists inside an index into arrays; check integer index dtypes.
    A 0-dim integer tensor counts as an int (so ``x[torch.tensor(1)]`` is a view)."""
    if isinstance(index, tuple):
        return tuple(_np_index(i) for i in index)
    if isinstance(index, Tensor):
        a = index._data
        if (a.dtype.kind, a.dtype.itemsize) not in _INDEX_TYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if a.dtype == np.uint8:  # a byte tensor is a mask, as before bool tensors existed
            warnings.warn(
                "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.",
                UserWarning,
                stacklevel=3,
            )
            return a.astype(bool)
        if a.ndim == 0 and a.dtype.kind in "iu":
            return int(a)
        return a
    if isinstance(index, list):
        if not index:  # ``x[[]]``: no rows
            return np.zeros(0, dtype=np.int64)
        a = np.asarray([i._data if isinstance(i, Tensor) else i for i in index])
        if a.size == 0 and a.dtype.kind == "f":  # ``[]`` selects nothing, as an empty int64 index
            a = a.astype(np.int64)
        if a.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return a
    return index


_SEQUENCE_AS_TUPLE = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in "
    "pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as "
    "tensor index, x[torch.tensor(seq)], which will result either in an error or a different result "
    "(Triggered internally at /__w/pytorch/pytorch/torch/csrc/autograd/python_variable_indexing.cpp:359.)"
)


def as_index(index: Any, ndim: int) -> Any:
    """A whole index into ``ndim`` dims as PyTorch reads it: a short list holding a sequence,
    tensor, slice, ``None`` or ``...`` is a tuple of indices (``x[[[0, 1], [1, 2]]]`` is
    ``x[[0, 1], [1, 2]]``), as NumPy once read it; any other index as it is. Then
    :func:`_np_index`, and an ``...`` that stands for no dims is dropped: it does not separate
    the advanced indices beside it, as it would in NumPy. Only the first ``...`` stands for
    dims: PyTorch reads a later one as none (``x[..., 0, ...]`` is ``x[..., 0]``)."""
    if type(index) is list and len(index) < 32:
        for i in index:
            if i is None or i is Ellipsis or isinstance(i, (Tensor, list, tuple, slice)):
                _native_warnings.warn(_SEQUENCE_AS_TUPLE)
                index = tuple(index)
                break
    index = _np_index(index)
    if type(index) is not tuple or not any(i is Ellipsis for i in index):
        return index
    spans = sum(_dims_consumed(i) for i in index)
    first = next(k for k, i in enumerate(index) if i is Ellipsis)
    later = [k for k, i in enumerate(index) if i is Ellipsis and k > first]
    if later and spans < ndim and any(i is not Ellipsis for i in index[later[0] :]):
        # (each ``...`` stands for the dims the others leave: past the last one, nothing is left)
        raise IndexError(f"too many indices for tensor of dimension {ndim}: a second '...' leaves no dims")
    index = index[: first + 1] + tuple(i for i in index[first + 1 :] if i is not Ellipsis)
    if any(isinstance(i, np.ndarray) for i in index) and spans == ndim:
        index = tuple(i for i in index if i is not Ellipsis)
    return index


def _dims_consumed(i: Any) -> int:
    """How many of the tensor's dims an index entry consumes (a mask its own dims; ``None``,
    ``...`` and a bool scalar none)."""
    if i is None or i is Ellipsis or isinstance(i, (bool, np.bool_)):
        return 0
    return i.ndim if isinstance(i, np.ndarray) and i.dtype == bool else 1


def is_basic(index: Any) -> bool:
    if isinstance(index, tuple):
        return all(
            i is None or i is Ellipsis or (isinstance(i, _BASIC) and not isinstance(i, bool)) for i in index
        )
    return index is None or index is Ellipsis or (isinstance(index, _BASIC) and not isinstance(index, bool))


def _may_repeat(index: Any) -> bool:
    """True when the index holds an integer array (whose entries may repeat)."""
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, np.ndarray) and i.dtype.kind in "iu" for i in items)


def _as_view_index(index: Any) -> tuple:
    """A basic index that makes NumPy return an array view (never a scalar copy)."""
    items = index if isinstance(index, tuple) else (index,)
    return items if any(i is Ellipsis for i in items) else items + (Ellipsis,)


def _mask_error(shape: tuple, index: Any) -> IndexError | None:
    """PyTorch's error for the first boolean mask in ``index`` whose shape does not match
    the dims of ``shape`` it covers (naming the mask's dim and the tensor's; a None in the
    index is a new dim of size 1 there)."""
    items = index if isinstance(index, tuple) else (index,)
    dims = [
        i.ndim if isinstance(i, np.ndarray) and i.dtype == bool else 0 if i is None or i is Ellipsis else 1
        for i in items
    ]
    indexed, dim = list(shape), 0
    for item, used in zip(items, dims):
        if item is Ellipsis:  # (it covers the dims the other items leave)
            dim += len(shape) - sum(dims)
        elif item is None:
            indexed.insert(dim, 1)
            dim += 1
        elif isinstance(item, np.ndarray) and item.dtype == bool:
            for j, size in enumerate(item.shape):
                if dim + j < len(indexed) and indexed[dim + j] != size:
                    return IndexError(
                        f"The shape of the mask {list(item.shape)} at index {j} does not match the shape "
                        f"of the indexed tensor {indexed} at index {dim + j}"
                    )
            dim += used
        else:
            dim += used
    return None


def _index_error(e: Exception, shape: tuple = (), index: Any = ()) -> IndexError:
    msg = str(e).replace("axis", "dimension")
    if "array is 0-dimensional" in msg:
        return IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
            "to convert a 0-dim tensor to a number"
        )
    if "boolean index did not match" in msg:
        return _mask_error(shape, index) or IndexError(
            f"The shape of the mask does not match the shape of the indexed tensor: {msg}"
        )
    if msg.startswith("shape mismatch: indexing arrays could not be broadcast"):
        # NumPy's "(3,2) (5,) " as PyTorch writes them: "[3, 2], [5]"
        shapes = [[int(n) for n in dims.split(",") if n] for dims in re.findall(r"\(([\d,]*)\)", msg)]
        return IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(str(shape) for shape in shapes)
        )
    return IndexError(msg)


# ---------------------------------------------------------------------- reading
class Slice(Function):
    """``input[basic index]``: a view (ints, slices, None, Ellipsis)."""

    _raw = True
    _view = True

    @staticmethod
    def forward(ctx, a, index):
        x = a._data
        ctx.shape, ctx.index = x.shape, index
        try:
            return x[index]
        except IndexError as e:
            raise _index_error(e, x.shape, index) from None

    @staticmethod
    def backward(ctx, g):
        return IndexPut.apply(g, ctx.shape, ctx.index, False), None


class Index(Function):
    """``input[advanced index]`` (integer arrays or boolean masks): a contiguous copy, as in
    PyTorch (NumPy lays ``x[:, mask]`` out with the indexed dim first in memory)."""

    _raw = True

    @staticmethod
    def forward(ctx, a, index):
        x = a._data
        ctx.shape, ctx.index = x.shape, index
        try:
            return np.ascontiguousarray(x[index])
        except IndexError as e:
            raise _index_error(e, x.shape, index) from None

    @staticmethod
    def backward(ctx, g):
        return IndexPut.apply(g, ctx.shape, ctx.index, _may_repeat(ctx.index)), None


class IndexWritten(Index):
    """The gradient of a value written at an advanced index (``x[index] = v``, ``index_put``):
    its derivative in a forward-mode pass (``autograd.grad_mode.forward_mode_pass``) writes the
    tangent where the value went, the last of repeated positions winning as in the write
    (PyTorch's forward rule); the reverse derivative sums them, as ``Index``'s."""

    _node_name = "IndexBackward0"

    @staticmethod
    def backward(ctx, g):
        accumulate = _may_repeat(ctx.index) and not forward_mode_pass[0]
        return IndexPut.apply(g, ctx.shape, ctx.index, accumulate), None


class IndexPut(Function):
    """Zeros of ``shape`` with ``g`` put at ``index`` (summing repeats when ``accumulate``):
    the adjoint of reading ``x[index]``."""

    _raw = True

    @staticmethod
    def forward(ctx, g, shape, index, accumulate):
        ctx.index = index
        out = np.zeros(shape, dtype=g._data.dtype)
        if accumulate:
            if isinstance(index, np.ndarray) and index.dtype.kind in "iu" and out.ndim:
                add_rows(out, index, g._data)
            else:
                np.add.at(out, index, g._data)
        else:
            out[index] = g._data
        return out

    @staticmethod
    def backward(ctx, gg):
        return _read(gg, ctx.index), None, None, None


def add_flat(out: np.ndarray, positions: np.ndarray, values: np.ndarray) -> None:
    """``out.flat[positions] += values``, summing repeated positions (``out`` C-contiguous)."""
    flat = out.reshape(-1)
    if out.dtype.kind in "fV":
        flat += np.bincount(positions.reshape(-1), weights=values.reshape(-1), minlength=flat.size).astype(
            out.dtype, copy=False
        )
    else:
        np.add.at(flat, positions.reshape(-1), values.reshape(-1))


def add_rows(out: np.ndarray, rows: np.ndarray, values: np.ndarray) -> None:
    """``out[rows] += values`` along dim 0, summing repeated rows (an embedding's backward)."""
    n = out.shape[0]
    row = out.size // n if n else 0
    rows = np.where(rows < 0, rows + n, rows) if rows.size and rows.min() < 0 else rows
    positions = rows.reshape(-1, 1) * row + np.arange(row)
    add_flat(out, positions, np.broadcast_to(values, rows.shape + out.shape[1:]))


def _split_mixed(index: Any) -> tuple | None:
    """PyTorch applies integer indices before advanced (array) ones; NumPy treats integers
    next to arrays as advanced too, which moves dims around. For such a mixed index, return
    ``(basic, advanced)`` with ``x[index]`` (PyTorch) == ``x[basic][advanced]`` (NumPy);
    None when the index is not mixed."""
    if not isinstance(index, tuple):
        return None
    is_int = [isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in index]
    if not any(is_int) or all(
        (isinstance(i, _BASIC) and not isinstance(i, (bool, np.bool_))) or i is None or i is Ellipsis
        for i in index
    ):
        return None
    basic, advanced = [], []
    for i, integer in zip(index, is_int):
        if integer:
            basic.append(i)
        elif isinstance(i, np.ndarray):
            basic.extend([slice(None)] * (i.ndim if i.dtype == np.bool_ else 1))
            advanced.append(i)
        elif isinstance(i, (bool, np.bool_)):  # a 0-d mask: a new dim, an advanced index's
            advanced.append(i)
        elif i is None or isinstance(i, slice):
            basic.append(i)
            advanced.append(slice(None))
        else:  # Ellipsis, or anything NumPy will judge
            basic.append(i)
            advanced.append(i)
    return tuple(basic), tuple(advanced)


def _view_steps(index: Any, shape: tuple) -> list[tuple[tuple, str]]:
    """The steps PyTorch takes for ``x[index]`` (a basic index), left to right, each as
    ``(view index of the step, its node's name)``: ``select`` for an int, ``slice``,
    ``unsqueeze`` for None; a slice written as the whole dim (``:``, ``0:n``, stop past the
    end; not ``-n:``) inside a tuple is no step, and with no step the node is ``AliasBackward0``."""
    if isinstance(index, slice):
        return [((index, Ellipsis), "SliceBackward0")]
    if not isinstance(index, tuple):
        index = (index,)
    spans = sum(1 for i in index if i is not None and i is not Ellipsis)
    steps: list[tuple[tuple, str]] = []
    dim = src = 0  # the dim in the result so far, and in ``x``
    for i in index:
        lead = (slice(None),) * dim
        if i is None:
            steps.append((lead + (None, Ellipsis), "UnsqueezeBackward0"))
            dim += 1
        elif i is Ellipsis:
            dim, src = dim + len(shape) - spans, src + len(shape) - spans
        elif isinstance(i, slice):
            whole = i.start in (None, 0) and i.step in (None, 1) and (i.stop is None or i.stop >= shape[src])
            if not whole:
                steps.append((lead + (i, Ellipsis), "SliceBackward0"))
            dim, src = dim + 1, src + 1
        else:
            steps.append((lead + (i, Ellipsis), "SelectBackward0"))
            src += 1
    return steps or [((Ellipsis,), "AliasBackward0")]


def check_steps(index: Any) -> None:
    """PyTorch's error for a slice of an index stepping by zero or backwards."""
    for i in index if isinstance(index, tuple) else (index,):
        if isinstance(i, slice) and i.step is not None and i.step <= 0:
            raise ValueError("step must be greater than zero")


def _read(input: Tensor, idx: Any, written: bool = False) -> Tensor:
    """``input[idx]`` as a graph (the gradient of a value ``written`` at ``idx``: see
    :class:`IndexWritten`)."""
    if is_basic(idx):
        view = _as_view_index(idx)
        check_steps(view)
        steps = _view_steps(idx, input._data.shape)
        if len(steps) == 1:
            return named_node(Slice.apply(input, view), steps[0][1])
        try:  # errors name dims of ``input``, as for one step
            input._data[view]
        except IndexError as e:
            raise _index_error(e, input._data.shape, view) from None
        for step, name in steps:  # one node per step, as PyTorch's graph has
            input = named_node(Slice.apply(input, step), name)
        return input
    read = IndexWritten if written else Index
    mixed = _split_mixed(idx)
    if mixed is not None:
        return read.apply(_read(input, mixed[0]), mixed[1])
    return read.apply(input, idx)


def getitem(input: Tensor, index: Any) -> Tensor:
    """``input[index]``: basic indexing gives a view, advanced indexing a copy."""
    if type(index) is int and input._data.ndim:  # the common ``x[i]``: a select
        n = input._data.shape[0]
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of bounds for dimension 0 with size {n}")
        return Select.apply(input, 0, index + n if index < 0 else index)
    return _read(input, as_index(index, input._data.ndim))


__getitem__ = getitem


# ---------------------------------------------------------------------- writing
class CopySlices(Function):
    """``dst[index] = value`` written into ``dst``'s own memory; the output is ``dst``'s
    array. The gradient of ``dst`` is zero at the written places; ``value`` gets the
    gradient read at ``index``."""

    _raw = True

    _node_name = "CopySlices"

    @staticmethod
    def forward(ctx, dst, index, value):
        v = value._data if isinstance(value, Tensor) else value
        ctx.index, ctx.value_shape = index, np.shape(v)
        write_index(dst._data, index, v)
        return dst._data

    @staticmethod
    def backward(ctx, g):
        gd = gv = None
        if ctx.needs_input_grad[0]:
            gd = CopySlices.apply(g.clone(), ctx.index, 0)
        if ctx.needs_input_grad[2]:
            gv = _read(g, ctx.index, written=True)
            if gv.ndim < len(ctx.value_shape):  # value had extra leading 1s
                gv = gv.reshape(ctx.value_shape)
        return gd, None, gv


def write_index(target: np.ndarray, index: Any, value: Any) -> None:
    """``target[index] = value`` with PyTorch's indexing rules and error messages."""
    mixed = _split_mixed(index)
    if mixed is not None:
        target, index = _basic_view(target, mixed[0]), mixed[1]  # writing it writes the target
    try:
        target[index] = value
    except IndexError as e:
        raise _index_error(e, target.shape, index) from None
    except ValueError:
        alias = None if target.flags.writeable else writable_alias(target)
        if alias is not None and _writes_each_address_once(target, index):
            alias[index] = value
            return
        if not target.flags.writeable:
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to "
                "tensor refers to a single memory location. Please clone() the "
                "tensor before performing the operation."
            ) from None
        shape, result = np.shape(value), np.shape(target[index])
        while shape and shape[0] == 1:  # PyTorch drops a value's leading 1s first
            shape = shape[1:]
        if shape != np.shape(value) and len(shape) <= len(result):
            try:  # (``x[0] = tensor([9.])``: NumPy takes no 1-element array for one element)
                target[index] = np.reshape(value, shape)
                return
            except ValueError:
                pass
        if _is_basic(index):  # PyTorch copies into a view: expand's error
            try:
                expand_sizes(f"torch.{scalar_type_name(np.asarray(value).dtype)}Tensor", shape, result)
            except RuntimeError as err:
                raise err from None
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(shape)} cannot "
            f"be broadcast to indexing result of shape {list(result)}"
        ) from None


def _basic_view(target: np.ndarray, basic: tuple) -> np.ndarray:
    """``target[basic]`` as a view, a 0-d one too (NumPy's ``a[0]`` of a vector is a copy)."""
    return target[basic if any(i is Ellipsis for i in basic) else basic + (Ellipsis,)]


def _writes_each_address_once(target: np.ndarray, index: Any) -> bool:
    """Whether ``target[index] = value``, ``target`` an expanded view, is one PyTorch allows:
    an advanced index (its ``index_put_``), or a view with no two elements at one address
    (``expanded[0] = 1``)."""
    if not _is_basic(index):
        return True
    view = target[index]
    return all(n <= 1 or stride != 0 for n, stride in zip(view.shape, view.strides))


def _is_basic(index: Any) -> bool:
    """Whether ``index`` selects a view (ints, slices, None, Ellipsis) rather than gathers."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(
        p is None
        or p is Ellipsis
        or isinstance(p, slice)
        or (isinstance(p, (int, np.integer)) and not isinstance(p, bool))
        for p in parts
    )


class IndexPutAccumulate(Function):
    """``out = input.clone(); out[indices] += values`` with repeated positions summed."""

    _raw = True

    @staticmethod
    def forward(ctx, a, index, values):
        ctx.index = index
        out = a._data.copy()
        v = values._data if isinstance(values, Tensor) else values
        mixed = _split_mixed(index)
        target, index = (_basic_view(out, mixed[0]), mixed[1]) if mixed is not None else (out, index)
        target_shape = np.shape(target[index])
        try:
            v = np.broadcast_to(np.asarray(v, dtype=out.dtype), target_shape)
        except ValueError:
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(np.shape(v))} "
                f"cannot be broadcast to indexing result of shape "
                f"{list(target_shape)}"
            ) from None
        np.add.at(target, index, v)
        return out

    @staticmethod
    def backward(ctx, g):
        gv = _read(g, ctx.index) if ctx.needs_input_grad[2] else None
        return g, None, gv


def index_put(input: Tensor, indices: tuple, values: Any, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``values`` written at ``input[indices]`` (a tuple of index
    tensors), or added there (repeats summed) with ``accumulate=True``."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(
            f"index_put(): argument 'indices' must be tuple of Tensors, not {type(indices).__name__}"
        )
    for k, i in enumerate(indices):
        if i is None:  # (a whole dim is a slice in t[...] = v, not here)
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got NoneType")
    require_source_dtype("index_put", input, values)
    idx = _np_index(tuple(indices))
    if accumulate:
        return named_node(IndexPutAccumulate.apply(input, idx, values), "IndexPutBackward0")
    out = input.clone()
    out[idx] = values
    return named_node(out, "IndexPutBackward0")


# ---------------------------------------------------------------------- gather / scatter
def _check_long(index: Tensor, op: str) -> np.ndarray:
    """``index``'s array: int64, or also int32 for gather and the scatters (as PyTorch 2.13)."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    dtype = index._data.dtype
    if op == "take":
        if dtype != np.int64:
            raise RuntimeError(f"take(): Expected a long tensor for index, but got {scalar_type_name(dtype)}")
    elif dtype not in (np.int64, np.int32):  # (the scatters' shared check names ``scatter``)
        raise RuntimeError(
            f"{'scatter' if op.startswith('scatter') else op}(): Expected dtype int32/int64 for index"
        )
    return index._data


def _check_bounds(idx: np.ndarray, size: int, dim: int) -> None:
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = idx[(idx < 0) | (idx >= size)].flat[0]
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def _scatter_grid(idx: np.ndarray, dim: int) -> tuple:
    """The NumPy index addressing ``out[i0, .., idx[i0, .., ik], .., ik]`` for every element."""
    grid = list(np.ogrid[tuple(slice(s) for s in idx.shape)])
    grid[dim] = idx
    return tuple(grid)


def _flat_positions(idx: np.ndarray, dim: int, shape: tuple) -> np.ndarray:
    """Flat (C-order) positions in an array of ``shape`` of the elements ``_scatter_grid``
    addresses."""
    strides = np.cumprod((1,) + tuple(reversed(shape[1:])))[::-1]
    grid = _scatter_grid(idx, dim)
    pos = grid[0] * strides[0]
    for g, st in zip(grid[1:], strides[1:]):
        pos = pos + g * st
    return np.broadcast_to(pos, idx.shape)


def _corner(shape: tuple) -> tuple:
    """The basic index of the leading ``shape`` block of a larger array."""
    return tuple(slice(s) for s in shape)


def _check_gather_shapes(
    x: np.ndarray, idx: np.ndarray, dim: int, op: str, src: np.ndarray | None = None
) -> None:
    if idx.ndim != x.ndim:
        raise RuntimeError(
            f"Index tensor must have the same number of dimensions as "
            f"{'input' if op == 'gather' else 'self'} tensor"
        )
    for d in range(x.ndim):
        too_big_for_self = d != dim and idx.shape[d] > x.shape[d]
        too_big_for_src = src is not None and idx.shape[d] > src.shape[d]
        if too_big_for_self or too_big_for_src:
            extra = f" and to be smaller size than src {list(src.shape)}" if src is not None else ""
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index "
                f"{list(idx.shape)} to be smaller than self {list(x.shape)} apart "
                f"from dimension {dim}{extra}"
            )


class Gather(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, dim, index):
        x, idx = a._data, index._data
        ctx.shape, ctx.dim, ctx.index = x.shape, dim, index
        return np.take_along_axis(
            x[_corner(idx.shape[:dim]) + (slice(None),) + _corner(idx.shape[dim + 1 :])], idx, axis=dim
        )

    @staticmethod
    def backward(ctx, g):
        zeros = Tensor._make(np.zeros(ctx.shape, dtype=g._data.dtype))
        return ScatterAdd.apply(zeros, ctx.dim, ctx.index, g), None, None


class GatherWritten(Gather):
    """The gradient of ``scatter``'s source: as :class:`IndexWritten`, its derivative in a
    forward-mode pass scatters the tangent (the last repeated index wins), not adds it."""

    _node_name = "GatherBackward0"

    @staticmethod
    def backward(ctx, g):
        zeros = Tensor._make(np.zeros(ctx.shape, dtype=g._data.dtype))
        write = Scatter if forward_mode_pass[0] else ScatterAdd
        return write.apply(zeros, ctx.dim, ctx.index, g), None, None


class ScatterAdd(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, dim, index, src):
        idx, s = index._data, src._data
        ctx.dim, ctx.index, ctx.src_shape = dim, index, s.shape
        out = a._data.copy()
        add_flat(
            out, _flat_positions(idx, dim, out.shape), s[_corner(idx.shape)].astype(out.dtype, copy=False)
        )
        return out

    @staticmethod
    def backward(ctx, g):
        gs = None
        if ctx.needs_input_grad[3]:
            gs = _pad_corner(Gather.apply(g, ctx.dim, ctx.index), ctx.src_shape)
        return g, None, None, gs


class Scatter(Function):
    """``out = input.clone(); out[..index..] = src`` (a tensor or a number)."""

    _raw = True

    @staticmethod
    def forward(ctx, a, dim, index, src):
        idx = index._data
        ctx.dim, ctx.index = dim, index
        out = a._data.copy()
        if isinstance(src, Tensor):
            ctx.src_shape = src._data.shape
            out[_scatter_grid(idx, dim)] = src._data[_corner(idx.shape)]
        else:
            out[_scatter_grid(idx, dim)] = src
        return out

    @staticmethod
    def backward(ctx, g):
        gi = gs = None
        if ctx.needs_input_grad[0]:
            gi = Scatter.apply(g, ctx.dim, ctx.index, 0)
        if ctx.needs_input_grad[3]:
            gs = _pad_corner(GatherWritten.apply(g, ctx.dim, ctx.index), ctx.src_shape)
        return gi, None, None, gs


def _pad_corner(g: Tensor, shape: tuple) -> Tensor:
    """``g`` placed in the leading corner of zeros of ``shape`` (identity when equal)."""
    if g._data.shape == tuple(shape):
        return g
    return IndexPut.apply(g, shape, _corner(g._data.shape), False)


def as_vectors(input: Tensor, dim: int, index: Tensor, src: Any = None) -> tuple | None:
    """PyTorch's gather and scatter take a 0-d tensor as a 1-element vector (the scatter one-hot
    ``zeros(10).scatter_(0, tensor(y), value=1)``): where ``input``, ``index`` or a tensor
    ``src`` is 0-d and none has more dims than one, their 1-d views (``dim`` checked);
    otherwise None."""
    ts = [t._data.ndim for t in (input, index, src) if isinstance(t, Tensor)]
    if 0 not in ts or max(ts) > 1:
        return None
    wrap_dim(dim, 1)
    return tuple(
        t.reshape(1) if isinstance(t, Tensor) and t._data.ndim == 0 else t for t in (input, index, src)
    )


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j] = input[index[i][j]][j]`` for ``dim=0`` (and likewise for other dims)."""
    x = input._data
    vectors = as_vectors(input, dim, index)
    if vectors is not None:
        out = gather(vectors[0], 0, vectors[1])
        return out.reshape(()) if index._data.ndim == 0 else out
    d = wrap_dim(dim, x.ndim)
    idx = _check_long(index, "gather")
    _check_gather_shapes(x, idx, d, "gather")
    _check_bounds(idx, x.shape[d] if x.ndim else 1, d)
    return Gather.apply(input, d, index)


def _scatter_checks(input: Tensor, dim: int, index: Tensor, src: Any, op: str) -> int:
    x = input._data
    d = wrap_dim(dim, x.ndim)
    idx = _check_long(index, op)
    if isinstance(src, Tensor) and src._data.dtype != x.dtype:  # (before the shapes, as PyTorch's)
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")  # every variant
    _check_gather_shapes(x, idx, d, op, src._data if isinstance(src, Tensor) else None)
    _check_bounds(idx, x.shape[d] if x.ndim else 1, d)
    return d


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of ``input`` with ``src`` added at the positions ``index`` names along ``dim``
    (repeated positions accumulate)."""
    vectors = as_vectors(input, dim, index, src)
    if vectors is not None:
        out = scatter_add(*vectors[:1], 0, *vectors[1:])
        return out.reshape(()) if input._data.ndim == 0 else out
    d = _scatter_checks(input, dim, index, src, "scatter_add")
    return ScatterAdd.apply(input, d, index, src)


# ---------------------------------------------------------------------- index_* ops
def _check_index_vector(index: Tensor, op: str) -> np.ndarray:
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    idx = index._data
    if idx.dtype not in (np.int64, np.int32) or (
        op in ("index_fill", "index_copy") and idx.dtype != np.int64
    ):
        got = scalar_type_name(idx.dtype)
        raise {  # PyTorch's kernels word it each their own way
            "index_add": RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {got}"),
            "index_select": RuntimeError("index_select(): Expected dtype int32 or int64 for index"),
            "index_fill": IndexError("index_fill_(): Expected dtype int64 for index."),
            "index_copy": RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {got}"),
        }.get(op, RuntimeError(f"{op}(): Expected dtype int32/int64 for index"))
    if idx.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    return idx.reshape(-1)


def _along(dim: int, idx: Any) -> tuple:
    return (slice(None),) * dim + (idx,)


class IndexSelect(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, dim, idx):
        ctx.shape, ctx.dim, ctx.idx = a._data.shape, dim, idx
        return np.take(a._data, idx, axis=dim)

    @staticmethod
    def backward(ctx, g):
        return IndexPut.apply(g, ctx.shape, _along(ctx.dim, ctx.idx), True), None, None


class IndexAdd(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, dim, idx, source, alpha):
        ctx.dim, ctx.idx, ctx.alpha = dim, idx, alpha
        out = a._data.copy()
        s = source._data if alpha == 1 else source._data * alpha
        np.add.at(out, _along(dim, idx), s.astype(out.dtype, copy=False))
        return out

    @staticmethod
    def backward(ctx, g):
        gs = None
        if ctx.needs_input_grad[3]:
            gs = IndexSelect.apply(g, ctx.dim, ctx.idx)
            if ctx.alpha != 1:
                gs = gs * ctx.alpha
        return g, None, None, gs, None


class IndexFill(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, dim, idx, value):
        ctx.dim, ctx.idx = dim, idx
        out = a._data.copy()
        out[_along(dim, idx)] = value._data if isinstance(value, Tensor) else value
        return out

    @staticmethod
    def backward(ctx, g):
        gi = gv = None
        if ctx.needs_input_grad[0]:
            gi = IndexFill.apply(g, ctx.dim, ctx.idx, 0)
        if ctx.needs_input_grad[3]:
            gv = IndexSelect.apply(g, ctx.dim, np.unique(ctx.idx)).sum()
        return gi, None, None, gv


def _checked_vector_index(input: Tensor, dim: int, index: Tensor, op: str) -> tuple:
    """``dim`` wrapped and ``index`` checked as PyTorch's kernels check it: only
    ``index_fill`` counts negative entries from the end; the others refuse them."""
    x = input._data
    d = wrap_dim(dim, x.ndim)
    idx = _check_index_vector(index, op)
    n = x.shape[d] if x.ndim else 1
    low = -n if op == "index_fill" else 0
    if idx.size and (idx.min() < low or idx.max() >= n):
        bad = idx[(idx < low) | (idx >= n)][0]
        if op == "index_fill":
            raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")
        if op == "index_copy":
            raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {d} with size {n}")
        if op == "index_select" and d > 0:
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={n}")
        raise IndexError("index out of range in self")
    return d, np.where(idx < 0, idx + n, idx) if idx.size and idx.min() < 0 else idx


def check_index_source(op: str, shape: tuple, d: int, n: int, source: tuple) -> None:
    """PyTorch's checks of ``op``'s (``index_add`` or ``index_copy``) ``source`` shape against
    the input's ``shape`` along ``d`` with ``n`` indices, and their errors."""
    if op == "index_add":
        if source and d >= len(source):
            raise RuntimeError(
                f"index_add_(): Indexing dim {d} is out of bounds of the source tensor with dim {len(source)}"
            )
        if source and n != source[d]:
            raise RuntimeError(
                f"index_add_(): Number of indices ({n}) should be equal to source.size(dim): ({source[d]}), for dim: {d}"
            )
        if not source and n != 1 and shape:
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        if len(source) != len(shape) or any(a != b for i, (a, b) in enumerate(zip(shape, source)) if i != d):
            raise RuntimeError(
                "source tensor shape must match self tensor shape, excluding the specified dimension. "
                f"Got self.shape = {list(shape)} source.shape = {list(source)}"
            )
        return
    if source and shape and len(source) != len(shape):
        raise IndexError(
            f"{op}_(): When source and destination are not scalars, their dimensionality must match. "
            f"Source dimensionality ({len(source)}), destination dimensionality ({len(shape)})"
        )
    if not source and n != 1:
        raise IndexError(f"{op}_(): When source is scalar, index should have one element (got {n})")
    sliced, source_sliced = shape[:d] + shape[d + 1 :], source[:d] + source[d + 1 :]
    if sliced != source_sliced:
        raise RuntimeError(
            f"{op}_(): Source/destination tensor must have same slice shapes. Destination slice shape: "
            f"{' '.join(map(str, sliced))} at dimension {d} and source slice shape: "
            f"{' '.join(map(str, source_sliced))} at dimension 0."
        )
    if source and n != source[d]:
        raise IndexError(
            f"{op}_(): Number of indices ({n}) should be equal to source.size(dim) ({source[d]})"
        )


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of ``input`` along ``dim`` at the positions in the 1-D ``index``."""
    d, idx = _checked_vector_index(input, dim, index, "index_select")
    if input._data.ndim == 0 and idx.size == 1:
        return scalar_as_vector(lambda v, d: IndexSelect.apply(v, d, idx.reshape(1)), input, d)
    return IndexSelect.apply(input, d, idx)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """A copy of ``input`` with ``alpha * source`` added to the slices along ``dim`` named by
    ``index`` (repeats accumulate)."""
    require_source_dtype("index_add", input, source)
    d, idx = _checked_vector_index(input, dim, index, "index_add")
    check_index_source("index_add", input._data.shape, d, idx.size, source._data.shape)
    if input._data.ndim == 0:  # (one slice: a 1-element vector's, as PyTorch reads a scalar)
        return scalar_as_vector(
            lambda v, d: IndexAdd.apply(v, d, idx.reshape(1), source.reshape(1), alpha), input, d
        )
    return IndexAdd.apply(input, d, idx, source, alpha)


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """A copy of ``input`` with the slices along ``dim`` named by ``index`` set to ``value``
    (a number or a 0-dim tensor)."""
    d, idx = _checked_vector_index(input, dim, index, "index_fill")
    if isinstance(value, Tensor) and value._data.ndim != 0:
        raise RuntimeError(
            f"index_fill_ only supports a 0-dimensional value tensor, but got "
            f"tensor with {value._data.ndim} dimension(s)."
        )
    if not isinstance(value, Tensor):
        value = checked_scalar(value, input._data.dtype)  # (-1 into uint8: 255, as PyTorch)
    return IndexFill.apply(input, d, idx, value)


# ---------------------------------------------------------------------- masks
def _check_mask(mask: Tensor, op: str) -> np.ndarray:
    if not isinstance(mask, Tensor):
        raise TypeError(f"{op}(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    if mask._data.dtype != np.bool_:
        raise RuntimeError(
            f"{op} only supports boolean masks, but got mask with dtype {c_type_name(mask.dtype)}"
        )
    return mask._data


class MaskedFill(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, mask, value):
        x, m = a._data, mask._data
        ctx.mask = mask
        v = value._data if isinstance(value, Tensor) else checked_scalar(value, x.dtype)
        try:
            # row-major whatever ``input``'s strides: PyTorch's fills a contiguous clone
            return row_major(np.where(m, np.asarray(v, dtype=x.dtype), x))
        except ValueError:
            raise broadcast_error(x.shape, m.shape) from None

    @staticmethod
    def backward(ctx, g):
        gi = gv = None
        if ctx.needs_input_grad[0]:
            gi = MaskedFill.apply(g, ctx.mask, 0)
        if ctx.needs_input_grad[2]:
            gv = masked_select(g, ctx.mask).sum()
        return gi, None, gv


def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """A copy of ``input`` with ``value`` where the boolean ``mask`` (broadcast) is True."""
    _check_mask(mask, "masked_fill_")
    if isinstance(value, Tensor) and value._data.ndim != 0:
        raise RuntimeError(
            f"masked_fill_ only supports a 0-dimensional value tensor, but got "
            f"tensor with {value._data.ndim} dimension(s)."
        )
    return MaskedFill.apply(input, mask, value)


class MaskedSelect(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, mask):
        try:
            x, m = np.broadcast_arrays(a._data, mask._data)
        except ValueError:
            raise broadcast_error(mask._data.shape, a._data.shape) from None  # (the mask first, as PyTorch)
        ctx.shape, ctx.mask = x.shape, m
        return x[m]

    @staticmethod
    def backward(ctx, g):
        return IndexPut.apply(g, ctx.shape, ctx.mask, False), None


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of ``input`` where the boolean ``mask`` (broadcast) is True, as 1-D."""
    _check_mask(mask, "masked_select")
    return MaskedSelect.apply(input, mask)


# ---------------------------------------------------------------------- take / nonzero
def take(input: Tensor, index: Tensor) -> Tensor:
    """Elements of ``input`` seen as 1-D at the positions ``index`` (output shaped like it)."""
    idx = _check_long(index, "take")
    n = input._data.size
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError(f"out of range: tried to access index {idx.max()} on a tensor of {n} elements.")
    return named_node(Index.apply(input.reshape(-1), idx), "TakeBackward0")


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """``gather`` with broadcasting of ``input`` and ``indices`` (flattened when ``dim`` is
    None)."""
    if dim is None:
        return take(input, indices.reshape(-1))
    d = wrap_dim(dim, input._data.ndim)
    s_in, s_ix = list(input._data.shape), list(indices._data.shape)
    s_in[d] = s_ix[d] = 1
    try:
        common = np.broadcast_shapes(tuple(s_in), tuple(s_ix))
    except ValueError:
        raise broadcast_error(tuple(s_in), tuple(s_ix)) from None
    full_in = common[:d] + (input._data.shape[d],) + common[d + 1 :]
    full_ix = common[:d] + (indices._data.shape[d],) + common[d + 1 :]
    return gather(input.expand(full_in), d, indices.expand(full_ix))


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """Indices of the non-zero elements: an ``(n, ndim)`` int64 tensor, or a tuple of 1-D
    index tensors with ``as_tuple=True``."""
    x = input._data
    if as_tuple:
        return tuple(Tensor._make(i.astype(np.int64, copy=False)) for i in np.nonzero(np.atleast_1d(x)))
    return Tensor._make(np.argwhere(x).astype(np.int64, copy=False))


def argwhere(input: Tensor) -> Tensor:
    """``nonzero(input)``."""
    return nonzero(input)
