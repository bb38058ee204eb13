"""In-place ops: ``add_``, ``mul_``, ``zero_``, ``copy_``, ``clamp_``, ``masked_fill_``,
``x[index] = value``, ``+=`` and friends, and the in-place samplers ``uniform_``,
``normal_``, ``bernoulli_``, ``random_``, ``exponential_``.

PyTorch's rules, and how they are kept here:

* Outside ``no_grad``, an in-place op on a leaf that requires grad raises (it would
  overwrite a value the graph needs). Inside ``no_grad`` it simply writes (optimisers).
* When no graph is recorded the op writes straight into ``t._data`` (NumPy ``out=``).
* When a graph is recorded, the op runs as its out-of-place Function on an *alias* of the
  tensor (the same graph edge; a copy of the values when backward may read them), the
  result is written into the tensor's memory, and the tensor is *rebased* onto the new
  node: same Tensor object, new ``grad_fn``. Gradients stay right.
* An in-place op on a *view* rebases the view's base instead (onto ``CopySlices``, a node
  writing the region the view shows) and re-derives the view from the new base, as
  PyTorch does; on a view of a leaf that requires grad it raises.
* Every in-place write bumps the version counter shared with the tensor's views; a node
  that saved the tensor (``save_for_backward``) then refuses to run backward, and so does
  a node that kept the overwritten array as its output. An inference tensor's counter
  refuses the bump outside ``inference_mode``: the op raises, after writing, as PyTorch's.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

import numpy as np

from .. import _random
from .._dtype import checked_scalar, get_default_dtype, python_scalar, result_type, scalar_type_name
from .._meta_array import MetaArray
from .._random import _gen
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.function import Function, modified_inplace_message
from ..autograd.function import _dispatch as function_dispatch
from ..kernels import torch_random as _kr
from ..kernels.fma import fma
from . import elementwise, indexing, shape
from ._helpers import broadcast_error, in_half, wrapped_int
from .as_strided import writable_alias
from .deprecated_overloads import scale_first
from .dtype_rules import (
    check_cast,
    refuse_bool_subtraction,
    refuse_integer_addcdiv,
    refuse_kernel,
    require_lerp_dtypes,
    require_source_dtype,
)
from .memory_overlap import refuse_partial_overlap
from .opmath import is_low, low_result, opmath_array, round_scalar_tail, scalar_of

#: everything here is a Tensor method; these are also ``torch.`` functions in PyTorch
_TORCH_FUNCTIONS = (
    "abs_",
    "ceil_",
    "clamp_",
    "clamp_max_",
    "clamp_min_",
    "clip_",
    "conj_physical_",
    "cos_",
    "exp_",
    "expm1_",
    "fill_",
    "floor_",
    "index_put_",
    "log1p_",
    "log_",
    "neg_",
    "negative_",
    "reciprocal_",
    "relu_",
    "round_",
    "rsqrt_",
    "sigmoid_",
    "sin_",
    "sqrt_",
    "square_",
    "tan_",
    "tanh_",
    "trunc_",
    "zero_",
)
__all__ = list(_TORCH_FUNCTIONS)  # most are generated below, from _WITH_INPLACE

_LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
_VIEW_OF_LEAF_MSG = "a view of a leaf Variable that requires grad is being used in an in-place operation."
_VIEW_MSG = (
    "in-place operation on a view while recording a graph, but the view cannot be "
    "located in its base tensor's memory (the base is not C-contiguous, or its data "
    "was replaced): write through the base tensor instead (e.g. base[index] = value) "
    "or clone() the view first."
)
_OVERLAP_MSG = (
    "unsupported operation: more than one element of the written-to tensor refers to "
    "a single memory location. Please clone() the tensor before performing the "
    "operation."
)


# ---------------------------------------------------------------------- the machinery
def _recording(self: Tensor, *others: Any, checked: bool = False) -> bool:
    """True when this in-place op must be recorded in the graph; first, as every in-place
    op's first step, PyTorch's refusal of an operand in ``others`` that partly shares
    ``self``'s memory (unless the caller ``checked`` it against the region it writes)."""
    if others and not checked:
        refuse_partial_overlap(self._data, others)
    if not grad_mode._state[0]:
        return False
    if self._rg:
        return True
    if any(isinstance(o, Tensor) and o._rg for o in others):
        return True
    if self._base is not None and self.__dict__ and "_view_creation" in self.__dict__:
        check_inplace(self)  # a view made in no_grad mode of a tensor that requires grad
    return False


_MULTI_VIEW_MSG = (
    "is a view and is being modified inplace. This view is the output of a function that returns "
    "multiple views. Such functions do not allow the output views to be modified inplace. You "
    "should replace the inplace operation by an out-of-place one."
)
_MULTI_VIEW_CHANGED_MSG = (
    "is a view and its base or another view of its base has been modified inplace. This view is "
    "the output of a function that returns multiple views. Such functions do not allow the output "
    "views to be modified inplace. You should replace the inplace operation by an out-of-place one."
)
_CUSTOM_VIEW_MSG = (
    "is a view and is being modified inplace. This view was created inside a custom Function (or "
    "because an input was returned as-is) and the autograd logic to handle view+inplace would "
    "override the custom backward associated with the custom Function, leading to incorrect "
    "gradients. This behavior is forbidden. You can fix this by cloning the output of the custom "
    "Function."
)
_NO_GRAD_VIEW_MSG = (
    "created in no_grad mode and is being modified inplace with grad mode enabled. Given that "
    "this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
    "moving both the view and the inplace either both inside the no_grad block (if you don't "
    "want the inplace to be tracked) or both outside (if you want the inplace to be tracked)."
)


def _check_view_creation(t: Tensor, kind: str, op: str | None) -> None:
    """PyTorch's refusal to modify in place, while recording, an output of a multi-output
    view op (``op``), a view made in no_grad mode (``op`` ""), a view a custom Function
    returned (``kind`` "custom"), or a view of one (None)."""
    name = op or (t.grad_fn.name().rsplit("Backward", 1)[0] if t.grad_fn is not None else "a view op")
    if kind == "custom":
        raise RuntimeError(f"Output {t._output_nr} of {name} {_CUSTOM_VIEW_MSG}")
    if kind == "multi":
        raise RuntimeError(f"Output {t._output_nr} of {name} {_MULTI_VIEW_MSG}")
    if op is None:
        raise RuntimeError(
            f"Output {t._output_nr} of {name} is a view of a view which was {_NO_GRAD_VIEW_MSG}"
        )
    raise RuntimeError(f"A view was {_NO_GRAD_VIEW_MSG}")


def check_inplace(t: Tensor) -> None:
    """Raise PyTorch's error when ``t`` may not be modified in place while recording: a
    leaf that requires grad, or a view of one, or a view that ``_check_view_creation`` refuses."""
    base = t._base
    if base is not None and t.__dict__:
        tag = t.__dict__.get("_view_creation")
        if tag is not None and (t._rg or base._rg):
            _check_view_creation(t, *tag)
    if base is not None and base._rg and base.grad_fn is None:
        raise RuntimeError(_VIEW_OF_LEAF_MSG)
    if t._rg and t.grad_fn is None and base is None:
        raise RuntimeError(_LEAF_MSG)


def _write(t: Tensor, values: Any, where: Any = True, expanded_ok: bool = False) -> None:
    """Copy ``values`` (broadcast, cast) into ``t``'s memory where ``where`` is True.
    ``expanded_ok``: ``t`` may be an expanded view (several elements at one address), as
    PyTorch's ``fill_``, ``zero_`` and ``masked_fill_`` allow."""
    dst = t._data
    try:
        np.copyto(dst, values, casting="unsafe", where=where)
    except ValueError:
        alias = writable_alias(dst) if expanded_ok and not dst.flags.writeable else None
        if alias is not None:
            np.copyto(alias, values, casting="unsafe", where=where)
            return
        if not dst.flags.writeable:
            raise RuntimeError(_OVERLAP_MSG) from None
        try:
            wider = np.broadcast_shapes(dst.shape, np.shape(values))
        except ValueError:  # (shapes that do not broadcast at all: PyTorch's size message)
            raise broadcast_error(dst.shape, np.shape(values)) from None
        raise RuntimeError(
            f"output with shape {list(dst.shape)} doesn't match the broadcast shape {list(wider)}"
        ) from None


def _alias(t: Tensor, copy: bool) -> Tensor:
    """A tensor standing for ``t``'s current value in the graph (same edge). ``copy``
    snapshots the values, for ops whose backward reads them."""
    return Tensor._make(t._data.copy() if copy else t._data, t.grad_fn, t._output_nr)


def _keeps_array(node: Any, arr: np.ndarray) -> bool:
    """True when ``node`` kept ``arr`` for its backward (as an attribute or saved tensor)."""
    if any(v is arr for v in vars(node).values()):
        return True
    saved = getattr(node, "_saved", None) or ()
    return any(s is not None and getattr(s, "_data", None) is arr for s in saved)


def _forbid_backward(node: Any, t: Tensor) -> None:
    """Make ``node``'s backward raise: the output it kept has just been overwritten."""
    v = t._version_box[0]
    msg = modified_inplace_message(t, node, v + 1, v)  # now: the tensor itself is not kept

    def backward(*_: Any) -> None:
        raise RuntimeError(msg)

    node.backward = backward  # shadows the class's backward for this node only


def _rebase(t: Tensor, out: Tensor, any_cast: bool = False) -> Tensor:
    """Write ``out``'s values into ``t`` and make ``t`` the output of ``out``'s node
    (``any_cast``: skip the casting rule, as ``copy_`` does)."""
    old = t.grad_fn
    if old is not None and _keeps_array(old, t._data):
        _forbid_backward(old, t)
    if out._data is not t._data:
        if not any_cast:
            check_cast(out._data.dtype, t._data.dtype)
        _write(t, out._data)
    t._bump_version()
    if out.grad_fn is not None:
        retained = t._retains_grad
        if retained and old is not None and old._retained:
            old._retained.pop(t._output_nr, None)
        t.grad_fn, t._output_nr, t._rg = out.grad_fn, out._output_nr, True
        if retained:
            t._retains_grad = False
            t.retain_grad()
    return t


def _record(
    t: Tensor, make_out: Callable[[Tensor], Tensor], snapshot: bool, any_cast: bool = False
) -> Tensor:
    """The recorded path of every in-place op: ``make_out(alias)`` computes the new values
    as a graph node from an alias of ``t``'s current value (a copy when ``snapshot``: the
    node's backward may read it), and ``t`` is rebased onto that node.

    When ``t`` is a view, its base is rebased instead (onto a node that writes the region
    the view shows), and the view becomes a fresh view of the new base; so gradients stay
    right for both.
    """
    check_inplace(t)
    base = t._base
    if base is None:
        alias = _alias(t, snapshot)
        out = make_out(alias)
        if out.grad_fn is None and t.grad_fn is not None:
            # new values that do not depend on the graph (a comparison, a random sample): the
            # graph before gets zero gradient through ``t`` from here on, as in PyTorch
            out = Copy.apply(alias, Tensor._make(out._data.astype(t._data.dtype, copy=False)))
        return _rebase(t, out, any_cast)
    pairs = _part_of_complex(t, base)
    geom = _geometry(t, _as_pairs(base) if pairs else base)
    if geom is None:
        raise RuntimeError(_VIEW_MSG)
    base_alias = _alias(base, False)
    frame = _as_pairs(base_alias) if pairs else base_alias
    current = AsStrided.apply(frame, geom)
    out = make_out(shape.Clone.apply(current) if snapshot else current)
    if not any_cast:
        check_cast(out._data.dtype, t._data.dtype)
    written = WriteRegion.apply(frame, out, geom)
    _rebase(base, _from_pairs(written) if pairs else written)
    fresh = AsStrided.apply(_as_pairs(base) if pairs else base, geom)
    t.grad_fn, t._output_nr, t._rg = fresh.grad_fn, 0, fresh._rg
    t._view_version = t._version_box[0]
    return t


def refresh_view(t: Tensor) -> None:
    """Re-derive the node of a view whose memory was changed in place after it was made
    (through its base or another view), as PyTorch regenerates a view's ``grad_fn``;
    called by ``Tensor._edge`` when the view is next used in the graph. An output of a
    multi-output view op (``unbind``) cannot be re-derived: PyTorch's error, at each use."""
    base = t._base
    tag = t.__dict__.get("_view_creation") if t.__dict__ else None
    if tag is not None and tag[0] == "multi" and base._rg:
        raise RuntimeError(f"Output {t._output_nr} of {tag[1]} {_MULTI_VIEW_CHANGED_MSG}")
    t._view_version = t._version_box[0]
    pairs = _part_of_complex(t, base)
    geom = _geometry(t, _as_pairs(base) if pairs else base)
    if geom is None or not base._rg:
        return
    with grad_mode.enable_grad():
        fresh = AsStrided.apply(_as_pairs(base) if pairs else base, geom)
    t.grad_fn, t._output_nr = fresh.grad_fn, 0


def _inplace(t: Tensor, fn: Callable[[Tensor], Tensor], others: tuple = (), snapshot: bool = True) -> Tensor:
    """Run the out-of-place ``fn`` and store its result in ``t``.

    ``snapshot`` is whether ``fn``'s backward may read ``t``'s input values (then the
    recorded graph gets a copy of them). A nested tensor's constituents take the result's.
    """
    if type(t) is not Tensor and t.is_nested:
        return t.copy_(fn(t))
    try:
        if _recording(t, *others):
            return _record(t, fn, snapshot)
        out = fn(t)
    except NotImplementedError as e:  # PyTorch refuses a result ``t`` cannot hold before it picks a kernel
        if hasattr(e, "promoted_dtype"):
            check_cast(e.promoted_dtype, t._data.dtype)
        raise
    check_cast(out._data.dtype, t._data.dtype)
    _write(t, out._data)
    t._bump_version()
    return t


def in_own_memory(
    t: Tensor, apply: Callable[[Tensor], Tensor], fallback: Callable[[Tensor], Tensor]
) -> Tensor:
    """An in-place op at the cost of its out-of-place form: ``apply(alias)`` runs a Function
    whose forward writes the result straight into its input's memory (``t``'s own), and ``t``
    is rebased onto that node, which keeps what its backward reads (ReLU: the result, as
    PyTorch's). A view while recording, or memory that cannot be written (an expanded or meta
    tensor), takes the general path: the out-of-place ``fallback``, written back by
    :func:`_inplace`; so does a subclass that takes over Functions (a masked tensor)."""
    d = t._data
    recording = _recording(t)
    own = type(d) is np.ndarray and d.flags.writeable and type(t) not in function_dispatch
    if not own or (recording and t._base is not None):
        return _inplace(t, fallback)
    if recording:
        return _record(t, apply, snapshot=False)
    out = apply(t)
    if out._data is not d:  # (computed apart: a 16-bit float widened, say)
        _write(t, out._data)
    t._bump_version()
    return t


# ---------------------------------------------------------------------- views of a base
def _part_of_complex(view: Tensor, base: Tensor) -> bool:
    """True for a real view of a complex base (``z.real``, ``z.imag``, ``view_as_real(z)``):
    its place is then measured in the base's (real, imaginary) pairs."""
    return base._data.dtype.kind == "c" and view._data.dtype.kind != "c"


def _as_pairs(t: Tensor) -> Tensor:
    """The complex ``t`` as its (real, imaginary) pairs (``view_as_real``, in the graph)."""
    from .complex import ViewAsReal  # the complex family binds methods of this one

    return ViewAsReal.apply(t)


def _from_pairs(t: Tensor) -> Tensor:
    """(real, imaginary) pairs back as complex numbers (``view_as_complex``, in the graph)."""
    from .complex import ViewAsComplex

    return ViewAsComplex.apply(t)


def _geometry(view: Tensor, base: Tensor) -> tuple | None:
    """Where ``view`` lies in its base: (shape, strides in elements, element offset) in the
    base's C-contiguous (logical) layout; None where the view is not a strided region of it."""
    b, v = base._data, view._data
    if v.dtype != b.dtype:
        return None
    item = b.itemsize
    offset = (v.__array_interface__["data"][0] - b.__array_interface__["data"][0]) // item
    strides = tuple(st // item for st in v.strides)
    if not b.flags.c_contiguous:
        return _logical_geometry(b, v.shape, strides, offset)
    if v.size:  # the view must lie inside the base's memory (it may not, after base.data = ...)
        reach = [(n - 1) * st for n, st in zip(v.shape, strides)]
        lo = offset + sum(r for r in reach if r < 0)
        hi = offset + sum(r for r in reach if r > 0)
        if lo < 0 or hi >= b.size:
            return None
    return v.shape, strides, offset


def _logical_geometry(b: np.ndarray, shape: tuple, strides: tuple, offset: int) -> tuple | None:
    """:func:`_geometry` for a base whose memory is not C-ordered (an einsum's or a permuted
    matmul's result, as PyTorch's strides): each memory slot is labelled with the logical
    (C-order) index of the base element there, the view's labels are read at its strides, and
    they must form a strided grid (None otherwise, and for a base whose elements share memory)."""
    if b.size == 0 or any(st % b.itemsize for st in b.strides):
        return None
    bst = [st // b.itemsize for st in b.strides]
    lo = sum((n - 1) * st for n, st in zip(b.shape, bst) if st < 0)
    span = sum((n - 1) * abs(st) for n, st in zip(b.shape, bst)) + 1
    where = np.full(b.shape, -lo, np.int64)
    for d, (n, st) in enumerate(zip(b.shape, bst)):
        where += (np.arange(n, dtype=np.int64) * st).reshape((n,) + (1,) * (b.ndim - d - 1))
    labels = np.full(span, -1, np.int64)
    labels[where.ravel()] = np.arange(b.size)
    if not np.array_equal(labels[where.ravel()], np.arange(b.size)):
        return None
    if 0 in shape:
        return shape, (0,) * len(shape), 0
    start = offset - lo
    reach = [(n - 1) * st for n, st in zip(shape, strides)]
    if start + sum(r for r in reach if r < 0) < 0 or start + sum(r for r in reach if r > 0) >= span:
        return None
    idx = np.lib.stride_tricks.as_strided(labels[start:], shape, tuple(st * 8 for st in strides))
    first = int(idx.flat[0])
    steps = tuple(
        int(idx[(0,) * d + (1,) + (0,) * (len(shape) - d - 1)]) - first if n > 1 else 0
        for d, n in enumerate(shape)
    )
    grid = np.full(shape, first, np.int64)
    for d, (n, st) in enumerate(zip(shape, steps)):
        grid += (np.arange(n, dtype=np.int64) * st).reshape((n,) + (1,) * (len(shape) - d - 1))
    return (shape, steps, first) if (idx >= 0).all() and np.array_equal(idx, grid) else None


def _region(arr: np.ndarray, geom: tuple) -> np.ndarray:
    """The view of ``arr`` (C-contiguous, base-shaped) described by ``geom``."""
    shape, strides, offset = geom
    flat = arr.reshape(-1)
    return np.lib.stride_tricks.as_strided(flat[offset:], shape, tuple(st * arr.itemsize for st in strides))


class AsStrided(Function):
    """The view of a base tensor at ``geom`` (how a modified view is re-derived from its
    rebased base)."""

    _raw = True
    _view = True

    @staticmethod
    def forward(ctx, base, geom):
        ctx.shape, ctx.geom = base._data.shape, geom
        return _region(np.ascontiguousarray(base._data), geom)

    @staticmethod
    def backward(ctx, g):
        return AsStridedBackward.apply(g, ctx.shape, ctx.geom), None


class AsStridedBackward(Function):
    """Zeros of the base's shape with ``g`` placed at the view's region."""

    _raw = True

    @staticmethod
    def forward(ctx, g, shape, geom):
        ctx.geom = geom
        out = np.zeros(shape, dtype=g._data.dtype)
        _region(out, geom)[...] = g._data
        return out

    @staticmethod
    def backward(ctx, gg):
        return AsStrided.apply(gg, ctx.geom), None, None


class WriteRegion(Function):
    """``base[region] = values`` in the base's own memory: the base's node after an
    in-place op on one of its views."""

    _raw = True

    _node_name, _profiled_as = "CopySlices", "aten::write_region"

    @staticmethod
    def forward(ctx, base, values, geom):
        ctx.geom = geom
        arr = base._data
        if arr.flags.c_contiguous:
            np.copyto(_region(arr, geom), values._data, casting="unsafe")
        else:  # the region by logical indices (see _logical_geometry)
            at = _region(np.arange(arr.size).reshape(arr.shape), geom)
            arr[np.unravel_index(at, arr.shape)] = np.broadcast_to(values._data, at.shape)
        return arr

    @staticmethod
    def backward(ctx, g):
        gb = ZeroRegion.apply(g, ctx.geom) if ctx.needs_input_grad[0] else None
        gv = AsStrided.apply(g, ctx.geom) if ctx.needs_input_grad[1] else None
        return gb, gv, None


class ZeroRegion(Function):
    """A copy of ``g`` with the region zeroed (the gradient of overwritten values)."""

    _raw = True

    @staticmethod
    def forward(ctx, g, geom):
        ctx.geom = geom
        out = np.array(g._data, order="C")
        _region(out, geom)[...] = 0
        return out

    @staticmethod
    def backward(ctx, gg):
        return ZeroRegion.apply(gg, ctx.geom), None


def _operand(other: Any) -> Any:
    if isinstance(other, Tensor):
        return other._data
    return python_scalar(other) if isinstance(other, np.generic) else other


def _ufunc_(t: Tensor, ufunc: np.ufunc, other: Any, true_div: bool = False, exact: bool = False) -> Tensor:
    """Unrecorded fast path: ``ufunc(t, other, out=t)`` with PyTorch's casting check; a
    Python int wraps into an integer dtype, and a number (or 0-dim array) beside a 16-bit
    float tensor is rounded to its dtype first, or with ``exact`` (``mul_``, ``div_``) read
    unrounded, as PyTorch's kernels read it."""
    x, o = t._data, _operand(other)
    rt = np.dtype(result_type(x, o))
    if true_div and rt.kind not in "fVc":
        rt = get_default_dtype().numpy
    check_cast(rt, x.dtype)
    if rt.kind in "iu":
        o = wrapped_int(rt, o)
    elif rt.itemsize == 2 and rt.kind in "fV" and np.ndim(o) == 0:
        o = in_half(rt, o, exact)
    try:
        if x.dtype.itemsize == 2 and x.dtype.kind in "fV":
            with np.errstate(over="ignore"):  # (a result beyond the 16-bit range: inf, silently)
                ufunc(x, o, out=x, casting="unsafe")
        else:
            ufunc(x, o, out=x, casting="unsafe")
    except ValueError:
        if not x.flags.writeable:
            raise RuntimeError(_OVERLAP_MSG) from None
        try:
            shape = np.broadcast_shapes(x.shape, np.shape(o))
        except ValueError:
            raise broadcast_error(x.shape, np.shape(o)) from None
        raise RuntimeError(
            f"output with shape {list(x.shape)} doesn't match the broadcast shape {list(shape)}"
        ) from None
    t._bump_version()
    return t


# ---------------------------------------------------------------------- arithmetic
@scale_first("alpha")
def add_(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """In-place ``self += alpha * other``."""
    if _recording(self, other):
        return _record(self, lambda s: s.add(other, alpha=alpha), snapshot=False)
    if alpha == 1:
        return _ufunc_(self, np.add, other)
    if _fusable(self, other):
        return _ufunc_(self, _multiply_add(alpha), other)
    return _ufunc_(self, np.add, _scaled_operand(self, other, alpha), exact=True)


@scale_first("alpha")
def sub_(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """In-place ``self -= alpha * other``."""
    refuse_bool_subtraction(self, other)
    if _recording(self, other):
        return _record(self, lambda s: s.sub(other, alpha=alpha), snapshot=False)
    if alpha == 1:
        return _ufunc_(self, np.subtract, other)
    if _fusable(self, other):
        return _ufunc_(self, _multiply_add(-alpha), other)
    return _ufunc_(self, np.subtract, _scaled_operand(self, other, alpha), exact=True)


def _fusable(self: Tensor, *operands: Any, low: bool = False) -> bool:
    """Whether an in-place multiply-add on ``self`` is PyTorch's fused one: a float32 or
    float64 tensor (with ``low`` also float16/bfloat16, computed in float32), and operands
    of its dtype (or numbers)."""
    dtype = self._data.dtype
    return (dtype in _FUSED_DTYPES or (low and is_low(dtype))) and all(
        o._data.dtype == dtype if isinstance(o, Tensor) else isinstance(o, (int, float)) for o in operands
    )


_FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _multiply_add(scale: Any) -> Callable:
    """``x + scale * o`` rounded once into ``out``: a ``ufunc`` for :func:`_ufunc_` (a tensor
    ``scale`` is an array of ``x``'s dtype, or float32 for a float16/bfloat16 ``x``, which is
    computed in float32)."""

    def fused(x: np.ndarray, o: Any, out: np.ndarray, casting: str) -> None:
        if x.dtype not in _FUSED_DTYPES:
            out[...] = fma(scale, opmath_array(o), opmath_array(x)).astype(x.dtype)
        else:
            fma(scale if isinstance(scale, np.ndarray) else x.dtype.type(scale), o, x, out=out)

    return fused


def _scaled_operand(self: Tensor, other: Any, alpha: Any) -> Any:
    """``alpha * other`` for an in-place add/sub: for 16-bit floats in float32 with ``alpha``
    rounded to their dtype, so that the update is rounded once (as PyTorch's kernel)."""
    low = low_result(self, other)
    product = opmath_array(other) * scalar_of(alpha, low)
    if low is not None and isinstance(product, np.ndarray):
        round_scalar_tail(product, low.numpy, self, other)
    return product


def mul_(self: Tensor, other: Any) -> Tensor:
    """In-place ``self *= other``."""
    if _recording(self, other):
        return _record(self, lambda s: s.mul(other), snapshot=True)
    return _ufunc_(self, np.multiply, other, exact=True)


def div_(self: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """In-place ``self /= other`` (or with ``rounding_mode`` 'trunc' / 'floor')."""
    if rounding_mode is None and not _recording(self, other):
        return _ufunc_(self, np.true_divide, other, true_div=True, exact=True)
    return _inplace(self, lambda s: s.div(other, rounding_mode=rounding_mode), (other,))


def pow_(self: Tensor, exponent: Any) -> Tensor:
    """In-place ``self **= exponent``."""
    return _inplace(self, lambda s: s.pow(exponent), (exponent,))


@scale_first("value")
def addcmul_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """In-place ``self += value * tensor1 * tensor2`` (not for three bool tensors, as PyTorch)."""
    if all(t._data.dtype.kind == "b" for t in (self, tensor1, tensor2)):
        refuse_kernel("addcmul_cpu_out", self, "b")
    if _recording(self, tensor1, tensor2):
        return _record(self, lambda s: s.addcmul(tensor1, tensor2, value=value), snapshot=False)
    if _fusable(self, tensor1, tensor2, low=True):  # PyTorch's ``self + (value * t1) * t2``, fused
        t1 = opmath_array(tensor1)
        scaled = t1 if value == 1 else np.multiply(t1, t1.dtype.type(value))
        return _ufunc_(self, _multiply_add(scaled), tensor2)
    prod = np.multiply(opmath_array(tensor1), opmath_array(tensor2))  # 16-bit: rounded once, by the add
    if value != 1:
        prod *= value
    return _ufunc_(self, np.add, prod, exact=True)


@scale_first("value")
def addcdiv_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """In-place ``self += value * tensor1 / tensor2``."""
    refuse_integer_addcdiv(tensor1, tensor2)
    if _recording(self, tensor1, tensor2):
        return _record(self, lambda s: s.addcdiv(tensor1, tensor2, value=value), snapshot=False)
    with np.errstate(divide="ignore", invalid="ignore"):  # x / 0: inf or nan, silently (PyTorch)
        t1 = opmath_array(tensor1)
        quot = np.true_divide(
            t1 if value == 1 else t1 * np.result_type(t1).type(value), opmath_array(tensor2)
        )
    return _ufunc_(self, np.add, quot, exact=True)


def lerp_(self: Tensor, end: Tensor, weight: Any) -> Tensor:
    """In-place ``self += weight * (end - self)``, as :func:`disttorch.lerp` (16-bit floats
    computed in float32 and rounded once)."""
    require_lerp_dtypes(self, end, weight)
    return _inplace(self, lambda s: elementwise.lerp(s, end, weight), (end, weight))


def _method_inplace(name: str, snapshot: bool = True) -> Callable:
    """``t.name_(*args)``: the in-place form of the tensor method ``name`` (looked up when
    called, so it follows whichever op family defines it)."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        fn = getattr(Tensor, name)
        return _inplace(self, lambda s: fn(s, *args, **kwargs), args + tuple(kwargs.values()), snapshot)

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In-place version of :meth:`Tensor.{name}`."
    return method


def _restride_inplace(name: str) -> Callable:
    """``t.name_(*args)`` for a view op that changes only the shape and strides
    (``unsqueeze_``, ``t_``, ...): ``t`` itself becomes the view of its own memory, as
    PyTorch changes a tensor's metadata in place; its values are not written."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        fn = getattr(Tensor, name)
        if grad_mode._state[0] and self._rg:
            check_inplace(self)
            out = fn(_alias(self, False), *args, **kwargs)
            self.grad_fn, self._output_nr = out.grad_fn, out._output_nr
        else:
            out = fn(self, *args, **kwargs)
        self._data = out._data
        self._storage_object = None  # new memory (see _storage.untyped_storage)
        return self

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In-place version of :meth:`Tensor.{name}`: changes the shape and strides only."
    return method


_RESTRIDE = ("t", "transpose", "swapaxes", "swapdims", "squeeze", "unsqueeze", "as_strided")

_WITH_INPLACE = (
    "neg",
    "abs",
    "exp",
    "log",
    "log1p",
    "expm1",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sigmoid",
    "relu",
    "square",
    "floor",
    "ceil",
    "round",
    "trunc",
    "sign",
    "clamp",
    "clip",
    "clamp_min",
    "clamp_max",
    "fmod",
    "remainder",
    "masked_fill",
    "scatter",
    "scatter_add",
    "index_add",
    "index_fill",
    "index_put",
    "scatter_reduce",
    "index_reduce",
    "sgn",
    "conj_physical",
)
_NO_SNAPSHOT = {
    "conj_physical",
    "neg",
    "masked_fill",
    "index_fill",
    "index_add",
    "index_put",
    "scatter",
    "scatter_add",
}
for _name in _WITH_INPLACE:
    globals()[_name + "_"] = _method_inplace(_name, _name not in _NO_SNAPSHOT)
negative_ = globals()["neg_"]


def relu_(self: Tensor) -> Tensor:
    """``max(x, 0)`` in place, written straight into the tensor's memory."""
    return in_own_memory(self, elementwise.ReluInplace.apply, elementwise.relu)


_masked_fill_ = globals()["masked_fill_"]


def masked_fill_(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    """Set ``value`` where the boolean ``mask`` (broadcast) is True, in place; on an expanded
    tensor (outside a recorded graph) each masked element's memory gets ``value``, with
    PyTorch's deprecation warning."""
    if self._data.flags.writeable or _recording(self, value) or not isinstance(mask, Tensor):
        return _masked_fill_(self, mask, value)
    warnings.warn(
        "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before "
        "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = scalar",
        UserWarning,
        stacklevel=2,
    )
    filled = indexing.masked_fill(self, mask, value)  # checks the mask and value as PyTorch
    _write(self, filled._data, where=np.broadcast_to(mask._data, self._data.shape), expanded_ok=True)
    self._bump_version()
    return self


true_divide_ = divide_ = div_
multiply_ = mul_
subtract_ = sub_


# ---------------------------------------------------------------------- overwriting
def _zero_grad(g: Tensor) -> Tensor:
    """The gradient of overwritten values: zeros, as PyTorch gives (not None)."""
    return Tensor._make(np.zeros_like(g._data))


class _Overwrite(Function):
    """Replace a tensor's values by ``values``: the old values get a zero gradient."""

    _raw = True

    @staticmethod
    def forward(ctx, dst, values):
        return values

    @staticmethod
    def backward(ctx, g):
        return _zero_grad(g), None


class Fill(Function):
    """``fill_(value)``: a tensor ``value`` (0-dim) gets the sum of the gradient."""

    _raw = True

    @staticmethod
    def forward(ctx, dst, value):
        return np.full(dst._data.shape, _operand(value), dtype=dst._data.dtype)

    @staticmethod
    def backward(ctx, g):
        return _zero_grad(g), (g.sum() if ctx.needs_input_grad[1] else None)


class Zero(_Overwrite):
    pass


class Uniform(_Overwrite):
    pass


class Normal(_Overwrite):
    pass


class Bernoulli(_Overwrite):
    pass


class Random(_Overwrite):
    pass


class Exponential(_Overwrite):
    pass


class Cauchy(_Overwrite):
    pass


class Geometric(_Overwrite):
    pass


class LogNormal(_Overwrite):
    pass


class Copy(Function):
    """``dst.copy_(src)``: ``src`` broadcast to ``dst``'s shape and cast to its dtype."""

    _raw = True

    _node_name, _profiled_as = "CopyBackwards", "aten::copy"

    @staticmethod
    def forward(ctx, dst, src):
        return np.broadcast_to(src._data, dst._data.shape)

    @staticmethod
    def backward(ctx, g):
        return _zero_grad(g), g


def _overwrite(t: Tensor, values: np.ndarray, node: type, expanded_ok: bool = False) -> Tensor:
    """Store freshly made ``values`` (already shaped) in ``t`` through ``node``."""
    if _recording(t):
        full = np.broadcast_to(values, t._data.shape)  # the node's output has t's shape
        return _record(t, lambda a: node.apply(a, full), snapshot=False)
    _write(t, values, expanded_ok=expanded_ok)
    t._bump_version()
    return t


def zero_(self: Tensor) -> Tensor:
    """Fill with zeros, in place."""
    return _overwrite(self, np.zeros((), dtype=self._data.dtype), Zero, expanded_ok=True)


def fill_(self: Tensor, value: Any) -> Tensor:
    """Fill with ``value`` (a number or a 0-dim tensor), in place."""
    if isinstance(value, Tensor) and value._data.ndim != 0:
        raise RuntimeError(
            f"fill_ only supports 0-dimension value tensor but got tensor with {value._data.ndim} dimensions."
        )
    if _recording(self, value):
        return _record(self, lambda a: Fill.apply(a, value), snapshot=False)
    value = checked_scalar(value, self._data.dtype)  # (-1 into uint8: 255, as PyTorch)
    _write(self, _operand(value), expanded_ok=True)
    self._bump_version()
    return self


def copy_(self: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (a tensor broadcast to this shape, of any dtype, or a number) into this tensor."""
    if isinstance(src, (bool, int, float, complex, np.number, np.bool_)):
        src = Tensor._make(np.asarray(src))
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}")
    if type(src._data) is MetaArray and type(self._data) is not MetaArray:
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    if src._data.shape != self._data.shape:
        _check_copy_shape(self._data.shape, src._data.shape)
    if _recording(self, src):
        return _record(self, lambda a: Copy.apply(a, src), snapshot=False, any_cast=True)
    _write(self, src._data)
    self._bump_version()
    return self


def _check_copy_shape(shape: tuple, src: tuple) -> None:
    """``src`` must broadcast to ``shape`` itself (no extra leading dims, even of size 1)."""
    tail = shape[len(shape) - len(src) :]
    if len(src) > len(shape) or any(s != 1 and s != d for s, d in zip(src, tail)):
        try:
            wanted = list(np.broadcast_shapes(shape, src))
        except ValueError:  # (shapes that do not broadcast at all: PyTorch's size message)
            raise broadcast_error(shape, src) from None
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape {wanted}")


#: what ``t[i] = value`` takes as ``value``, as PyTorch (no sequences, no NumPy arrays)
_SETITEM_VALUES = (Tensor, int, float, complex, np.integer)


def _masked_fill(idx: Any, value: Tensor) -> bool:
    """Whether PyTorch writes ``value`` through ``idx`` with ``masked_fill_``, which takes a
    one-element value of any dtype: one boolean mask the only array in the index."""
    if value._data.size != 1:
        return False
    items = idx if isinstance(idx, tuple) else (idx,)
    if any(isinstance(i, (bool, np.bool_)) for i in items):
        return False  # (a bool scalar is a 0-d mask of its own)
    arrays = [i for i in items if isinstance(i, np.ndarray)]
    return len(arrays) == 1 and arrays[0].dtype == bool and arrays[0].ndim > 0


def _check_index_structure(self: Tensor, index: Any) -> None:
    """PyTorch's IndexError for an index it refuses before it compares dtypes (too many
    indices, masks or index tensors of mismatched shapes); an index past a dim's end is found
    later, by its kernel."""
    try:
        self[index]  # noqa: B018
    except IndexError as e:
        if "out of bounds" not in str(e):
            raise


def setitem(self: Tensor, index: Any, value: Any) -> None:
    """``self[index] = value`` (``value`` broadcast; a tensor or a number, converted as
    PyTorch converts it: an overflowing number is an error, except into 16-bit floats)."""
    if not isinstance(value, _SETITEM_VALUES):
        kind = type(value)
        name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        raise TypeError(f"can't assign a {name} to a {self.type()}")
    if not isinstance(value, Tensor) and not (self._data.itemsize == 2 and self._data.dtype.kind in "fV"):
        value = checked_scalar(value, self._data.dtype)
    idx = indexing.as_index(index, self._data.ndim)
    if idx.__class__ is not int:
        indexing.check_steps(idx)
        if isinstance(value, Tensor) and not indexing.is_basic(idx):  # PyTorch's index_put,
            if _masked_fill(idx, value):
                value = value.reshape(())
            elif value._data.dtype != self._data.dtype:
                _check_index_structure(self, index)
                require_source_dtype("index_put", self, value)
    if isinstance(value, Tensor):  # basic indexing writes the view self[idx]; index_put all of self
        basic = idx.__class__ is int or indexing.is_basic(idx)
        refuse_partial_overlap(self._data[idx] if basic else self._data, (value,))
    if _recording(self, value, checked=True):
        _record(self, lambda a: indexing.CopySlices.apply(a, idx, value), snapshot=False)
        return
    indexing.write_index(self._data, idx, _operand(value))
    self._bump_version()


__setitem__ = setitem


# ---------------------------------------------------------------------- samplers
# Each draws from PyTorch's CPU stream of the generator (see disttorch/_random.py), in the
# order PyTorch's kernel visits the tensor's memory.
def _strides(t: Tensor) -> tuple | None:
    return None if t._data.flags.c_contiguous else t._data.strides


def _float_only(t: Tensor, op: str) -> None:
    if t._data.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{op}\" not implemented for '{scalar_type_name(t._data.dtype)}'")


def _draw(t: Tensor, sample: Any) -> np.ndarray:
    """``sample(n)``'s values laid out in ``t``'s memory order."""
    shape = t._data.shape
    if _strides(t) is None:
        return sample(int(t._data.size)).reshape(shape)
    return _random._memory_order(shape, t._data.strides, sample)


def _sampled(t: Tensor, draw: Any) -> np.ndarray:
    """``draw(shape, dtype, strides)`` (strides None when contiguous) as values of ``t``. A
    complex ``t`` is drawn as PyTorch fills its real view: (real, imaginary) pairs."""
    d = t._data
    if d.dtype.kind != "c":
        return draw(d.shape, d.dtype, _strides(t))
    half = d.itemsize // 2
    strides = None if _strides(t) is None else d.strides + (half,)
    pairs = draw(d.shape + (2,), np.dtype(f"f{half}"), strides)
    return np.ascontiguousarray(pairs).view(d.dtype)[..., 0]


def no_draw_on_meta(sample: Callable) -> Callable:
    """In-place sampling (``sample(tensor, ...)``) on a meta tensor draws nothing: there is no
    data, and the generator does not move, as in PyTorch."""

    @functools.wraps(sample)
    def sample_unless_meta(*args: Any, **kwargs: Any) -> Any:
        target = args[0] if args else kwargs.get("tensor", kwargs.get("self"))
        return target if type(target._data) is MetaArray else sample(*args, **kwargs)

    return sample_unless_meta


@no_draw_on_meta
def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with samples uniform on ``[a, b)``, in place (complex: each part on ``[a, b)``)."""
    if self._data.dtype.kind != "c":
        _float_only(self, "check_uniform_bounds")
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
    engine = _gen(generator)
    u = _sampled(
        self, lambda shape, dt, st: _random._uniform_array(engine, shape, dt, float(a), float(b), st)
    )
    return _overwrite(self, u, Uniform)


@no_draw_on_meta
def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with samples from ``N(mean, std**2)``, in place. Complex tensors, as PyTorch's:
    the real and imaginary parts each ``N(mean, std**2 / 2)``."""
    if self._data.dtype.kind != "c":
        _float_only(self, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    engine = _gen(generator)
    scale = float(std) / np.sqrt(2) if self._data.dtype.kind == "c" else float(std)
    z = _sampled(
        self,
        lambda shape, dt, st: _random._normal_array(engine, shape, dt, float(mean), scale, st is None, st),
    )
    return _overwrite(self, z, Normal)


@no_draw_on_meta
def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """Fill with 1 with probability ``p`` (a number or a broadcastable tensor), else 0."""
    prob = _operand(p)
    if np.any((np.asarray(prob) < 0) | (np.asarray(prob) > 1)):
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    engine = _gen(generator)
    if isinstance(p, Tensor):
        draws = _random._bernoulli_array(engine, self._data.shape, np.asarray(prob))
    else:
        draws = _draw(self, lambda n: _random._bernoulli_array(engine, (n,), float(prob)))
    return _overwrite(self, draws, Bernoulli)


_NO_TO = object()


@no_draw_on_meta
def random_(self: Tensor, from_: Any = None, to: Any = _NO_TO, *, generator: Any = None) -> Tensor:
    """Fill with integers uniform on ``[from, to)``; ``random_(to)`` means ``[0, to)``;
    ``random_(from, None)`` means up to the dtype's maximum; without bounds, ``[0, 2**mantissa]``
    for floats and ``[0, max]`` for integers."""
    if to is _NO_TO:
        from_, to = (None, None) if from_ is None else (0, from_)
    elif from_ is None:
        from_ = 0
    dt = self._data.dtype
    engine = _gen(generator)
    vals = _draw(self, lambda n: _random._random_array(engine, (n,), dt, from_, to))
    return _overwrite(self, vals, Random)


def _continuous(self: Tensor, op: str, kernel: Any, args: tuple, generator: Any, node: type) -> Tensor:
    """Fill a floating tensor with ``kernel(engine, n, dtype, *args)``'s samples."""
    _float_only(self, op)
    engine, dt = _gen(generator), self._data.dtype
    return _overwrite(self, _draw(self, lambda n: kernel(engine, n, dt, *args)), node)


@no_draw_on_meta
def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with samples from the exponential distribution of rate ``lambd``, in place."""
    if self._data.dtype.kind not in "fV":
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {scalar_type_name(self._data.dtype)}"
        )
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _continuous(self, "exponential_cpu", _kr.exponential, (float(lambd),), generator, Exponential)


@no_draw_on_meta
def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with samples from the Cauchy distribution ``median + sigma * tan(pi * (U - 1/2))``."""
    if sigma <= 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    return _continuous(self, "cauchy_cpu", _kr.cauchy, (float(median), float(sigma)), generator, Cauchy)


@no_draw_on_meta
def geometric_(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """Fill with the number of Bernoulli(``p``) trials up to the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    engine, dt = _gen(generator), self._data.dtype
    vals = _draw(self, lambda n: _kr.geometric(engine, n, dt, float(p)))
    return _overwrite(self, vals, Geometric)


@no_draw_on_meta
def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Any = None) -> Tensor:
    """Fill with ``exp(N(mean, std**2))`` samples, in place."""
    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    args = (float(mean), float(std))
    return _continuous(self, "log_normal_cpu", _kr.log_normal, args, generator, LogNormal)


def fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Fill the main diagonal (``self[i, i, ..., i]``) with ``fill_value``, in place. A tensor
    of more than two dims must have all dims equal; for a tall matrix, ``wrap=True`` starts
    the diagonal again every ``ncols + 1`` rows (as NumPy's ``fill_diagonal``)."""
    x = self._data
    if x.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if x.ndim > 2 and len(set(x.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    step = int(sum(np.prod(x.shape[i + 1 :], dtype=np.int64) for i in range(x.ndim)))
    if wrap and x.ndim == 2 and x.shape[0] > x.shape[1]:
        positions = np.arange(0, x.size, step)
    else:
        positions = np.arange(min(x.shape)) * step
    mask = np.zeros(x.size, dtype=bool)
    mask[positions] = True
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value  # a Scalar, as in PyTorch
    mask_t = Tensor._make(mask.reshape(x.shape))
    return _inplace(self, lambda s: indexing.masked_fill(s, mask_t, value), (), snapshot=False)


TENSOR_METHODS = tuple(
    [n + "_" for n in _WITH_INPLACE]
    + [
        "add_",
        "sub_",
        "mul_",
        "div_",
        "pow_",
        "addcmul_",
        "addcdiv_",
        "lerp_",
        "negative_",
        "true_divide_",
        "divide_",
        "multiply_",
        "subtract_",
        "zero_",
        "fill_",
        "copy_",
        "uniform_",
        "normal_",
        "bernoulli_",
        "random_",
        "exponential_",
        "cauchy_",
        "geometric_",
        "log_normal_",
        "fill_diagonal_",
        "__setitem__",
    ]
)

TENSOR_OPERATORS = {
    "__iadd__": add_,
    "__isub__": sub_,
    "__imul__": mul_,
    "__itruediv__": div_,
    "__ipow__": pow_,
}
