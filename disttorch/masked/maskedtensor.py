"""``torch.masked.MaskedTensor``: a tensor whose elements are either specified (mask True)
or masked out (mask False), as PyTorch's prototype.

A MaskedTensor *is* a :class:`~disttorch.Tensor` (its values are the data, so it is a leaf
or a node of the autograd graph like any tensor) and carries a bool mask of the same shape.
Every ``Function`` applied to one comes here first:

- elementwise ops (unary, binary with scalars, plain tensors or MaskedTensors of the same
  mask) compute on the data and keep the mask; MaskedTensors with different masks are an
  error, as in PyTorch;
- reductions (``sum``, ``mean``, ``amax``, ``amin``, ``prod``, ``argmax``, ``argmin``) and
  ``softmax``/``log_softmax`` see only the specified elements; a result element is specified
  when any element it reduces is;
- views, slicing, indexing and joining (``transpose``, ``view``, ``x[1:]``, ``cat``, ``stack``, ...)
  move data and mask alike;
- other ops that change the shape (matmul, ...) are not supported and say so.

``.grad`` of a MaskedTensor is a MaskedTensor with its mask; the gradient reaches only the
specified elements of a reduction's input.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Function, dispatch_disabled, register_function_dispatch
from ..ops import reduction as _reduction
from ..ops import softmax as _softmax
from . import reductions as _masked

__all__ = ["MaskedTensor", "as_masked_tensor", "is_masked_tensor", "masked_tensor"]

_SUPPORTED = (
    _dtype.float16,
    _dtype.float32,
    _dtype.float64,
    _dtype.bool,
    _dtype.int8,
    _dtype.int16,
    _dtype.int32,
    _dtype.int64,
)


class _Share(Function):
    """The same values as a new node: the data of a MaskedTensor as a plain tensor and back,
    with the gradient passing through unchanged."""

    _raw = True

    @staticmethod
    def forward(ctx, a):
        return a._data

    @staticmethod
    def backward(ctx, g):
        return g


def _check(data: Any, mask: Any) -> None:
    """Validate the constructor's arguments; the first MaskedTensor turns on its dispatch
    (until then, ``Function.apply`` pays nothing for it)."""
    register_function_dispatch(MaskedTensor, _apply)
    if not isinstance(data, Tensor) or isinstance(data, MaskedTensor):
        raise TypeError(f"data must be a Tensor, got {type(data).__name__}")
    if not isinstance(mask, Tensor) or isinstance(mask, MaskedTensor):
        raise TypeError(f"mask must be a Tensor, got {type(mask).__name__}")
    if mask.dtype != _dtype.bool:
        raise TypeError(f"mask must have dtype bool, got {mask.dtype}")
    if data.dtype not in _SUPPORTED:
        raise TypeError(f"{data.dtype} is not supported in MaskedTensor.")
    if data.dim() != mask.dim():
        raise ValueError(f"data.dim() must equal mask.dim(), got {data.dim()} and {mask.dim()}")
    if data.shape != mask.shape:
        raise ValueError(f"data.size() must equal mask.size(), got {list(data.shape)} and {list(mask.shape)}")


class MaskedTensor(Tensor):
    """``MaskedTensor(data, mask, requires_grad=False)``: ``data`` where ``mask`` is True,
    masked out elsewhere. ``data`` and ``mask`` are copied; ``mask`` must be bool and of
    ``data``'s shape."""

    def __new__(cls, data: Tensor, mask: Tensor, requires_grad: bool = False) -> "MaskedTensor":
        _check(data, mask)
        self = object.__new__(cls)
        self._init_state(data._data.copy())
        self._masked_mask = mask._data.copy()
        if requires_grad:
            self.requires_grad_(True)
        return self

    @classmethod
    def _wrap(cls, t: Tensor, mask: np.ndarray) -> "MaskedTensor":
        """A MaskedTensor that is ``t`` for autograd (same node, same values) with ``mask``."""
        self = object.__new__(cls)
        self._init_state(t._data, t.grad_fn, t._output_nr)
        self._rg = t._rg
        self._masked_mask = mask
        return self

    # ------------------------------------------------------------------ data and mask
    def get_data(self) -> Tensor:
        """The data (masked-out elements included) as a plain tensor; differentiable."""
        with dispatch_disabled():
            return _Share.apply(self)

    def get_mask(self) -> Tensor:
        """The bool mask: True where an element is specified."""
        return Tensor._make(self._masked_mask)

    def to_tensor(self, value: Any) -> Tensor:
        """A plain tensor: the data where specified, ``value`` where masked out."""
        return self.get_data().masked_fill(Tensor._make(~self._masked_mask), value)

    @property
    def grad(self) -> "MaskedTensor | None":
        """The gradient as a MaskedTensor with this tensor's mask."""
        g = self._grad
        return None if g is None else MaskedTensor._wrap(g, self._masked_mask)

    @grad.setter
    def grad(self, value: Any) -> None:
        Tensor.grad.fset(self, value.get_data().detach() if isinstance(value, MaskedTensor) else value)

    def detach(self) -> "MaskedTensor":
        """This MaskedTensor outside the graph (sharing its memory)."""
        return MaskedTensor._wrap(Tensor.detach(self), self._masked_mask)

    # ------------------------------------------------------------------ reductions
    def _reduced(self, out: Tensor, dim: Any, keepdim: bool) -> "MaskedTensor":
        axis = None if dim is None or dim == () else dim
        return MaskedTensor._wrap(out, np.any(self._masked_mask, axis=axis, keepdims=keepdim))

    def _reduce(self, fn: Any, dim: Any, keepdim: bool, **kw: Any) -> "MaskedTensor":
        dims = _axes(dim, self.dim())
        with dispatch_disabled():
            out = fn(self, dims, keepdim=keepdim, mask=self.get_mask(), **kw)
        return self._reduced(out, dims, keepdim)

    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> "MaskedTensor":
        """Sum of the specified elements over ``dim`` (all dims when None)."""
        return self._reduce(_masked.sum, dim, keepdim, dtype=dtype)

    def mean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> "MaskedTensor":
        """Mean of the specified elements over ``dim``."""
        return self._reduce(_masked.mean, dim, keepdim, dtype=dtype)

    def amax(self, dim: Any = (), keepdim: bool = False) -> "MaskedTensor":
        """Largest specified element over ``dim``."""
        return self._reduce(_masked.amax, dim, keepdim)

    def amin(self, dim: Any = (), keepdim: bool = False) -> "MaskedTensor":
        """Smallest specified element over ``dim``."""
        return self._reduce(_masked.amin, dim, keepdim)

    def prod(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> "MaskedTensor":
        """Product of the specified elements over ``dim`` (one dim, or all when None)."""
        if isinstance(dim, (tuple, list)) and len(dim) == 1:
            dim = dim[0]
        return self._reduce(_masked.prod, dim, keepdim, dtype=dtype)

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> "MaskedTensor":
        """Index of the largest specified element along ``dim`` (of the flattened tensor when None)."""
        return self._reduce(_masked.argmax, dim, keepdim)

    def argmin(self, dim: int | None = None, keepdim: bool = False) -> "MaskedTensor":
        """Index of the smallest specified element along ``dim``."""
        return self._reduce(_masked.argmin, dim, keepdim)

    def softmax(self, dim: int, dtype: Any = None) -> "MaskedTensor":
        """Softmax over ``dim`` of the specified elements; the mask is kept."""
        with dispatch_disabled():
            out = _masked.softmax(self, dim, dtype=dtype, mask=self.get_mask())
        return MaskedTensor._wrap(out, self._masked_mask)

    def log_softmax(self, dim: int, dtype: Any = None) -> "MaskedTensor":
        """Log-softmax over ``dim`` of the specified elements; the mask is kept."""
        with dispatch_disabled():
            out = _masked.log_softmax(self, dim, dtype=dtype, mask=self.get_mask())
        return MaskedTensor._wrap(out, self._masked_mask)

    # ------------------------------------------------------------------ repr
    def __repr__(self) -> str:
        if self._data.ndim == 0:
            value = _format(self._data.item()) if self._masked_mask.item() else "--"
            return f"MaskedTensor({value}, {bool(self._masked_mask.item())})"
        body = "\n".join("  " + line for line in _rows(self._data, self._masked_mask).split("\n"))
        return "MaskedTensor(\n" + body + "\n)"

    __str__ = __repr__
    __hash__ = Tensor.__hash__


# Elementwise methods that compute without a Function (comparisons, tests): the mask is kept.
_NO_FUNCTION = (
    "__eq__ __ne__ __lt__ __le__ __gt__ __ge__ eq ne lt le gt ge greater greater_equal less "
    "less_equal not_equal isnan isinf isfinite isposinf isneginf signbit logical_not logical_and "
    "logical_or logical_xor"
).split()


def _keeping_mask(name: str) -> Any:
    base = getattr(Tensor, name)

    def method(self: MaskedTensor, *args: Any, **kwargs: Any) -> Any:
        _same_masks(name, [self, *(a for a in args if isinstance(a, MaskedTensor))])
        plain = [a.get_data() if isinstance(a, MaskedTensor) else a for a in args]
        with dispatch_disabled():
            out = base(self.get_data(), *plain, **kwargs)
        return MaskedTensor._wrap(out, self._masked_mask) if isinstance(out, Tensor) else out

    method.__name__ = name
    method.__doc__ = f"``Tensor.{name}`` of the data; the mask is kept."
    return method


for _name in _NO_FUNCTION:
    if hasattr(Tensor, _name):
        setattr(MaskedTensor, _name, _keeping_mask(_name))


def _axes(dim: Any, ndim: int) -> Any:
    """``dim`` as None (every dim), an int or a tuple of non-negative ints."""
    if dim is None or dim == () or dim == []:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(d % max(ndim, 1) for d in dim)
    return int(dim) % max(ndim, 1)


def _format(v: Any) -> str:
    return f"{v:8.4f}" if isinstance(v, float) else str(v)


def _rows(data: np.ndarray, mask: np.ndarray) -> str:
    """PyTorch's layout: one bracketed row per 1-d slice, masked-out elements as ``--``
    right-aligned to at least 8 characters."""
    if data.ndim == 1:
        items = [_format(v) for v in data.tolist()]
        width = max((8 if not m else len(s) for s, m in zip(items, mask.tolist())), default=0)
        return "[" + ", ".join(s if m else "--".rjust(width) for s, m in zip(items, mask.tolist())) + "]"
    parts = ["\n".join("  " + line for line in _rows(d, m).split("\n")) for d, m in zip(data, mask)]
    return "[\n" + ",\n".join(parts) + "\n]"


# ---------------------------------------------------------------------- Function dispatch
def _reduction_call(name: str) -> Any:
    def call(mt: MaskedTensor, args: tuple) -> MaskedTensor:
        dims, keepdim = args[1], args[2]
        extra = {"dtype": args[3]} if len(args) > 3 and name in ("sum", "mean", "prod") else {}
        return getattr(mt, name)(dims, keepdim, **extra)

    return call


_BY_FUNCTION = {
    _reduction.Sum: _reduction_call("sum"),
    _reduction.Mean: _reduction_call("mean"),
    _reduction.Amax: _reduction_call("amax"),
    _reduction.Amin: _reduction_call("amin"),
    _reduction.Prod: _reduction_call("prod"),
    _softmax.Softmax: lambda mt, args: mt.softmax(args[1]),
    _softmax.LogSoftmax: lambda mt, args: mt.log_softmax(args[1]),
}


def _same_masks(op: str, masked: list) -> None:
    mask = masked[0]._masked_mask
    for other in masked[1:]:
        if other._masked_mask.shape != mask.shape or not np.array_equal(other._masked_mask, mask):
            raise ValueError(
                f"Input masks must match: {op} of MaskedTensors needs the same mask on each (got "
                f"masks of shape {list(mask.shape)} and {list(other._masked_mask.shape)} that "
                f"differ); combine them with to_tensor() first"
            )


def _passthrough() -> frozenset:
    """The Functions that move elements without computing (views, slicing, joining): they are
    applied to data and mask alike, as PyTorch's passthrough ops."""
    from ..ops import indexing as ix
    from ..ops import shape as sh

    return frozenset(
        (sh.View, sh.UnsafeView, sh.Unsqueeze, sh.Squeeze, sh.Expand, sh.Permute, sh.Transpose, sh.Narrow)
        + (sh.Select, sh.Split, sh.Unbind, sh.Unfold, sh.Cat, sh.Stack, sh.Repeat, sh.Flip, sh.Roll)
        + (sh.Diagonal, ix.Slice, ix.Index)
    )


_PASSTHROUGH: list = []


def _apply_passthrough(fn: type, args: tuple) -> Any:
    with dispatch_disabled():
        out = fn.apply(*args)
        masks = fn.apply(*(a.get_mask() if isinstance(a, MaskedTensor) else a for a in args))
    outs, mouts = (out, masks) if isinstance(out, tuple) else ((out,), (masks,))
    for m in mouts:
        if isinstance(m, Tensor) and m.dtype != _dtype.bool:
            raise TypeError(
                f"{fn.__name__} of MaskedTensors with plain tensors: make every operand a MaskedTensor"
            )
    wrapped = tuple(
        MaskedTensor._wrap(o, m._data) if isinstance(o, Tensor) else o for o, m in zip(outs, mouts)
    )
    return wrapped if isinstance(out, tuple) else wrapped[0]


def _apply(fn: type, args: tuple) -> Any:
    """Run Function ``fn`` on arguments of which at least one is a MaskedTensor."""
    masked = [a for a in args if isinstance(a, MaskedTensor)]
    special = _BY_FUNCTION.get(fn)
    if special is not None and args[0] is masked[0]:
        return special(masked[0], args)
    if not _PASSTHROUGH:
        _PASSTHROUGH.append(_passthrough())
    if fn in _PASSTHROUGH[0]:
        return _apply_passthrough(fn, args)
    mask = masked[0]._masked_mask
    _same_masks(fn.__name__, masked)
    with dispatch_disabled():
        out = fn.apply(*args)
    outs = out if isinstance(out, tuple) else (out,)
    for o in outs:
        if isinstance(o, Tensor) and o._data.shape != mask.shape:
            raise TypeError(
                f"MaskedTensor does not support {fn.__name__}: it changes the shape "
                f"{list(mask.shape)} to {list(o._data.shape)}; only elementwise ops, reductions, "
                f"softmax and views/slicing/joining keep a mask (use get_data()/to_tensor() for the rest)"
            )
    wrapped = tuple(MaskedTensor._wrap(o, mask) if isinstance(o, Tensor) else o for o in outs)
    return wrapped if isinstance(out, tuple) else wrapped[0]


def is_masked_tensor(obj: Any) -> bool:
    """Whether ``obj`` is a MaskedTensor."""
    return isinstance(obj, MaskedTensor)


def masked_tensor(data: Tensor, mask: Tensor, requires_grad: bool = False) -> MaskedTensor:
    """A new MaskedTensor (a leaf) holding a copy of ``data`` and ``mask``."""
    return MaskedTensor(data, mask, requires_grad)


def as_masked_tensor(data: Tensor, mask: Tensor) -> MaskedTensor:
    """A MaskedTensor whose gradient flows back to ``data`` (differentiable constructor)."""
    _check(data, mask)
    return MaskedTensor._wrap(_Share.apply(data), mask._data.copy())
