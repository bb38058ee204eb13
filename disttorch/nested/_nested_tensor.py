"""``NestedTensor``: a batch of tensors of different sizes (``torch.nested``), in either of
PyTorch's layouts.

A nested tensor is its list of constituent tensors (``unbind()`` gives them back), each an
ordinary tensor of the autograd graph, so gradients reach every constituent and, through
them, whatever the constituents were made from. ``layout=torch.strided`` allows any dim but
the batch dim to differ between constituents; ``layout=torch.jagged`` allows exactly one
(the "ragged" dim, 1 unless transposed) and offers ``values()``/``offsets()``/``lengths()``.

The NestedTensor object is a :class:`~disttorch.Tensor` whose own array only carries the
dtype and the number of dims (a zero-stride placeholder of shape ``(B, d1, ...)`` with 0 for
the irregular dims); every ``Function`` applied to it comes to :func:`_apply`, which runs it
per constituent when that is what PyTorch computes (elementwise ops, ``linear``,
``layer_norm``, ``dropout``, ``matmul``/``bmm``, ``softmax``/``log_softmax`` over a non-batch
dim, ``transpose``/``permute`` of the non-batch dims, ``split``/``chunk`` along a regular dim,
``clone``, casts, attention), reduces
(``sum``/``mean``/``amax``/``amin``) as PyTorch's jagged layout does, and raises
``NotImplementedError`` naming the op otherwise. Comparisons and in-place methods act on
each constituent too.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

import numpy as np

from .. import _layout, _native_warnings
from .._tensor import Size, Tensor
from ..autograd.function import dispatch_disabled, register_function_dispatch

__all__ = ["NestedTensor", "RaggedDim"]

_ids = itertools.count(1)


class RaggedDim:
    """The size of a jagged tensor's ragged dim in its ``shape`` (shown ``j1``, ``j2``, ...
    as PyTorch's symbolic sizes); two are equal when their constituents' lengths are."""

    __slots__ = ("_id", "_lengths")

    def __init__(self, lengths: np.ndarray) -> None:
        self._id = next(_ids)
        self._lengths = tuple(int(n) for n in lengths)

    def __repr__(self) -> str:
        return f"j{self._id}"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, RaggedDim) and other._lengths == self._lengths

    def __hash__(self) -> int:
        return hash(self._lengths)


class NestedTensor(Tensor):
    """A batch of tensors of different sizes; build one with
    :func:`disttorch.nested.nested_tensor` or :func:`disttorch.nested.as_nested_tensor`."""

    @classmethod
    def _build(cls, parts: Sequence[Tensor], layout: Any, ragged_idx: int | None = None, like: Any = None):
        """A nested tensor of ``parts`` (used as they are); ``ragged_idx`` hints the ragged dim
        of a jagged tensor whose constituents happen to agree in every size; ``like`` is the
        nested tensor whose ragged size (``j1``) it shares when its lengths are the same."""
        register_function_dispatch(NestedTensor, _apply)  # on first use: free until then
        parts = list(parts)
        if not parts:
            raise ValueError("a nested tensor needs at least one constituent tensor")
        first = parts[0]
        for i, p in enumerate(parts):
            if not isinstance(p, Tensor) or isinstance(p, NestedTensor):
                raise TypeError(
                    f"nested tensor constituents must be Tensors, got {type(p).__name__} at index {i}"
                )
            if p.dim() != first.dim():
                raise RuntimeError(
                    "All Tensors given to nested_tensor must have the same dimension. Found dimension "
                    f"{p.dim()} for Tensor at index {i} and dimension {first.dim()} for Tensor at index 0."
                )
            if p.dtype != first.dtype:
                raise RuntimeError(
                    f"All Tensors given to nested_tensor must have the same dtype, got {p.dtype} at "
                    f"index {i} and {first.dtype} at index 0"
                )
        sizes = np.array([p._data.shape for p in parts], dtype=np.int64).reshape(len(parts), first.dim())
        irregular = [d + 1 for d in range(first.dim()) if (sizes[:, d] != sizes[0, d]).any()]
        if layout is _layout.jagged:
            if first.dim() == 0 or len(irregular) > 1:
                raise RuntimeError(
                    "Cannot represent given tensor list as a nested tensor with the jagged layout. Note "
                    "that the jagged layout only allows for a single ragged dimension. For example: "
                    "(B, *, D_0, D_1, ..., D_N), with ragged * dim."
                )
            ragged_idx = irregular[0] if irregular else (ragged_idx or 1)
        elif layout is not _layout.strided:
            raise RuntimeError(f"nested tensors support layout torch.strided or torch.jagged, got {layout}")
        else:
            ragged_idx = None
            _native_warnings.warn(_native_warnings.NESTED_PROTOTYPE, once=True)
        shape = (len(parts),) + tuple(
            0 if d + 1 in irregular else int(sizes[0, d]) for d in range(first.dim())
        )
        self = object.__new__(cls)
        self._init_state(np.broadcast_to(np.empty((), first._data.dtype), shape))
        self._rg = any(p._rg for p in parts)
        self._parts = parts
        self._nt_layout = layout
        self._ragged_idx = ragged_idx
        self._irregular = irregular
        self._lengths = sizes[:, ragged_idx - 1].copy() if ragged_idx else None
        same = like is not None and like._lengths is not None and np.array_equal(like._lengths, self._lengths)
        self._ragged_size = like._ragged_size if same else (RaggedDim(self._lengths) if ragged_idx else None)
        return self

    # ------------------------------------------------------------------ attributes
    @property
    def is_nested(self) -> bool:
        """True."""
        return True

    @property
    def layout(self) -> Any:
        """``torch.strided`` or ``torch.jagged``."""
        return self._nt_layout

    @property
    def _nt_shape(self) -> tuple:
        return tuple(
            self._ragged_size if d == self._ragged_idx else s for d, s in enumerate(self._data.shape)
        )

    @property
    def shape(self) -> Size:
        """The sizes, with the ragged dim as ``j<n>`` (jagged layout only: a strided nested
        tensor has no size, as in PyTorch)."""
        return self.size()

    def size(self, dim: int | None = None) -> Any:
        """``size(dim)`` of a regular dim; the ragged dim of a jagged tensor is ``j<n>``; an
        irregular dim of a strided nested tensor has no size (RuntimeError, as PyTorch)."""
        if dim is None:
            if self._nt_layout is _layout.strided:
                raise RuntimeError(
                    "NestedTensor of layout torch.strided has no size: dims "
                    f"{self._irregular} differ between constituents; use size(dim) or unbind()"
                )
            return Size(self._nt_shape)
        d = _wrap(dim, self._data.ndim)
        if d in self._irregular and self._nt_layout is _layout.strided:
            raise RuntimeError(f"Given dimension {d} is irregular and does not have a size.")
        return self._nt_shape[d]

    def stride(self, dim: int | None = None) -> Any:
        """Not defined for a nested tensor (as PyTorch's)."""
        raise RuntimeError("NestedTensor has no strides: use unbind() to reach its constituents")

    def numel(self) -> int:
        """The number of elements of all constituents."""
        return int(sum(p._data.size for p in self._parts))

    def is_contiguous(self, memory_format: Any = None) -> bool:
        """Whether the constituents are laid out one after the other (not after a transpose
        of the ragged dim)."""
        return self._ragged_idx in (None, 1)

    def unbind(self, dim: int = 0) -> tuple:
        """The constituent tensors (gradients flow back through them)."""
        if _wrap(dim, self._data.ndim) != 0:
            raise RuntimeError(f"unbind(): nested tensors can only be unbound along dim 0, got dim {dim}")
        return tuple(self._parts)

    def view(self, *shape: Any) -> "NestedTensor":
        """Each constituent viewed as ``shape[1:]`` (``shape[0]`` is the batch size, which
        cannot change; a -1 is inferred per constituent, as for an irregular dim)."""
        return self._reshaped("view", shape)

    def reshape(self, *shape: Any) -> "NestedTensor":
        """Each constituent reshaped to ``shape[1:]`` (see :meth:`view`)."""
        return self._reshaped("reshape", shape)

    def _reshaped(self, op: str, shape: tuple) -> "NestedTensor":
        sizes = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        if not sizes or sizes[0] != len(self._parts):
            raise RuntimeError(
                f"{op}: For now nested {op} cannot change or infer the implicit batch dimension "
                f"(the first size must be the batch size {len(self._parts)}, got {list(sizes)})"
            )
        return self._map(lambda p: getattr(Tensor, op)(p, *sizes[1:]))

    def __len__(self) -> int:
        return len(self._parts)

    def __iter__(self):
        return iter(self._parts)

    def __getitem__(self, index: Any) -> Tensor:
        if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
            return self._parts[index]
        raise NotImplementedError(
            f"nested tensors support indexing by an int (a constituent), got {type(index).__name__}; "
            "use unbind() or to_padded_tensor()"
        )

    # ------------------------------------------------------------------ jagged layout
    def _jagged(self, what: str) -> None:
        if self._nt_layout is not _layout.jagged:
            raise RuntimeError(f"{what}() is defined for nested tensors of layout torch.jagged only")

    def values(self) -> Tensor:
        """The constituents joined along the ragged dim ``(sum of lengths, *rest)``; a new
        tensor (differentiable), not a view as in PyTorch."""
        self._jagged("values")
        from ..ops.shape import cat

        return cat(self._parts, self._ragged_idx - 1)

    def offsets(self) -> Tensor:
        """Where each constituent starts in ``values()`` (and where the last ends), int64."""
        self._jagged("offsets")
        return Tensor._make(np.concatenate([[0], np.cumsum(self._lengths)]).astype(np.int64))

    def lengths(self) -> None:
        """None, as PyTorch's for a nested tensor built without explicit lengths."""
        self._jagged("lengths")
        return None

    # ------------------------------------------------------------------ autograd
    @property
    def grad(self) -> "NestedTensor | None":
        """The gradients of the constituents as a nested tensor (None before backward)."""
        grads = [p.grad for p in self._parts]
        if all(g is None for g in grads):
            return None
        from .._creation import zeros_like

        parts = [g if g is not None else zeros_like(p) for g, p in zip(grads, self._parts)]
        return NestedTensor._build(parts, self._nt_layout, self._ragged_idx, self)

    @grad.setter
    def grad(self, value: Any) -> None:
        for p, g in zip(self._parts, value.unbind() if value is not None else [None] * len(self._parts)):
            p.grad = g

    def requires_grad_(self, requires_grad: bool = True) -> "NestedTensor":
        """Make every constituent a leaf that requires grad (or not)."""
        for p in self._parts:
            p.requires_grad_(requires_grad)
        self._rg = requires_grad
        return self

    def detach(self) -> "NestedTensor":
        """The nested tensor of the detached constituents."""
        return self._map(lambda p: p.detach())

    def backward(self, gradient: Any = None, retain_graph: Any = None, create_graph: bool = False, **kw: Any):
        """Backpropagate ``gradient`` (a nested tensor of the same structure) into the graph."""
        if gradient is None:
            raise RuntimeError(
                "grad can be implicitly created only for scalar outputs, not for a nested tensor"
            )
        from ..autograd import backward

        backward(list(self._parts), list(gradient.unbind()), retain_graph, create_graph)

    # ------------------------------------------------------------------ conversion
    def _map(self, fn: Callable, *others: Any) -> "NestedTensor":
        """The nested tensor of ``fn(constituent_i, other_i...)`` (nested ``others`` give their
        i-th constituent, anything else is passed as is)."""
        outs = [
            fn(p, *(o._parts[i] if isinstance(o, NestedTensor) else o for o in others))
            for i, p in enumerate(self._parts)
        ]
        return NestedTensor._build(outs, self._nt_layout, self._ragged_idx, self)

    def to_padded_tensor(self, padding: float, output_size: Sequence[int] | None = None) -> Tensor:
        """See :func:`disttorch.nested.to_padded_tensor`."""
        from . import to_padded_tensor

        return to_padded_tensor(self, padding, output_size)

    def __repr__(self) -> str:
        if self._nt_layout is _layout.jagged:
            dims = ", ".join(str(s) for s in self._nt_shape)
            return (
                f"NestedTensor(size=({dims}), offsets={self.offsets()!r}, contiguous={self.is_contiguous()})"
            )
        body = ",\n".join("\n".join("  " + line for line in repr(p).split("\n")) for p in self._parts)
        grad = ", requires_grad=True" if self._rg and all(p.grad_fn is None for p in self._parts) else ""
        return f"nested_tensor([\n{body}\n]{grad})"

    __str__ = __repr__
    __hash__ = Tensor.__hash__


# Elementwise methods that compute without a Function (comparisons, tests): per constituent.
_NO_FUNCTION = (
    "__eq__ __ne__ __lt__ __le__ __gt__ __ge__ eq ne lt le gt ge isnan isinf isfinite logical_not "
    "logical_and logical_or"
).split()


def _per_constituent(name: str) -> Callable:
    base = getattr(Tensor, name)

    def method(self: NestedTensor, *args: Any) -> NestedTensor:
        return self._map(lambda p, *a: base(p, *a), *args)

    method.__name__ = name
    method.__doc__ = f"``Tensor.{name}`` of each constituent."
    return method


def _in_place(name: str) -> Callable:
    base = getattr(Tensor, name)

    def method(self: NestedTensor, *args: Any, **kwargs: Any) -> NestedTensor:
        for i, p in enumerate(self._parts):
            base(p, *(a._parts[i] if isinstance(a, NestedTensor) else a for a in args), **kwargs)
        return self

    method.__name__ = name
    method.__doc__ = f"``Tensor.{name}`` on each constituent, in place."
    return method


for _name in _NO_FUNCTION:
    if hasattr(Tensor, _name):
        setattr(NestedTensor, _name, _per_constituent(_name))
# in-place methods (``add_``, ``mul_``, ``zero_``, ``fill_``, ...) act on each constituent
for _name in dir(Tensor):
    if _name.endswith("_") and not _name.startswith("_") and _name not in ("requires_grad_", "detach_"):
        if callable(getattr(Tensor, _name, None)) and _name not in NestedTensor.__dict__:
            setattr(NestedTensor, _name, _in_place(_name))


def _wrap(dim: int, ndim: int) -> int:
    if not -ndim <= dim < ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})"
        )
    return dim % ndim


# ---------------------------------------------------------------------- Function dispatch
def _dim_at(position: int, op: str) -> Callable:
    """A rule for a Function whose argument ``position`` is a dim of the nested tensor. A
    rule rewrites the arguments for the constituents and returns the result's ragged dim."""

    def remap(nt: NestedTensor, args: list) -> int | None:
        d = _wrap(args[position], nt._data.ndim)
        if d == 0:
            raise RuntimeError(
                f"{op}(): not supported when reducing across the batch dimension for NestedTensor"
            )
        args[position] = d - 1
        return nt._ragged_idx

    return remap


def _permute(nt: NestedTensor, args: list) -> int | None:
    order = tuple(args[1])
    if order[0] != 0:
        raise RuntimeError("Nested tensor dimension 0 cannot be transposed")
    args[1] = tuple(o - 1 for o in order[1:])
    return order.index(nt._ragged_idx) if nt._ragged_idx else None


def _split(nt: NestedTensor, args: list) -> int | None:
    d = args[2]
    if d == 0 or d in nt._irregular:
        raise RuntimeError(
            f"split/chunk of a nested tensor works along a regular non-batch dim, got dim {d} "
            f"(irregular dims: {nt._irregular})"
        )
    args[2] = d - 1
    return nt._ragged_idx


def _no_mask(nt: NestedTensor, args: list) -> int | None:
    if args[3] is not None:
        raise NotImplementedError(
            "scaled_dot_product_attention on nested tensors takes no attn_mask (as PyTorch's): the "
            "ragged lengths already say which keys exist; pass is_causal=True for a causal mask"
        )
    return nt._ragged_idx


def _reduce(fn: type, nt: NestedTensor, args: tuple) -> Tensor:
    """Sum/Mean/Amax/Amin of a nested tensor: over everything (a 0-d tensor), over regular dims
    (nested, per constituent), or over the ragged dim too (a dense tensor, as PyTorch's jagged)."""
    from ..ops import reduction, shape

    dims, rest = args[1], args[2:]
    nd = nt._data.ndim
    with dispatch_disabled():
        if dims is None:
            if fn is reduction.Mean:
                total = shape.stack([fn.apply(p, None, False, *rest[1:]) * p.numel() for p in nt._parts])
                return total.sum() / nt.numel()
            parts = shape.stack([fn.apply(p, None, False, *rest[1:]) for p in nt._parts])
            return fn.apply(parts, None, False, *rest[1:])
        dims = tuple(_wrap(d, nd) for d in dims)
        if 0 in dims:
            raise RuntimeError(
                f"{fn.__name__.lower()}(): reducing across the batch dimension of a NestedTensor"
            )
        outs = [fn.apply(p, tuple(d - 1 for d in dims), *rest) for p in nt._parts]
    if nt._ragged_idx in dims:  # jagged, reduced over its ragged dim: no longer nested
        return shape.stack(outs)
    keep = rest[0]
    ragged = nt._ragged_idx
    if ragged is not None and not keep:
        ragged -= sum(d < ragged for d in dims)
    return NestedTensor._build(outs, nt._nt_layout, ragged, nt)


class _PerPart:
    """Stands, in rewritten arguments, for a value computed from the constituent at hand."""

    def __init__(self, of_part: Callable) -> None:
        self.of_part = of_part


def _dropout(nt: NestedTensor, args: list) -> int | None:
    if tuple(args[2]) != nt._data.shape:
        raise NotImplementedError("channel-wise dropout (dropout1d/2d/3d) is not supported on nested tensors")
    args[2] = _PerPart(lambda p: p._data.shape)
    return nt._ragged_idx


def _view(nt: NestedTensor, args: list) -> int | None:
    """A view of the dims after every irregular one (``unflatten(-1, (h, d))``,
    ``flatten(-2)``): each constituent keeps its leading sizes and takes the new trailing ones."""
    old, new = nt._data.shape, tuple(args[1])
    keep = next((k for k, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    fixed = sorted({*nt._irregular, nt._ragged_idx or 0} - {0})
    if max(fixed, default=0) >= keep:
        raise RuntimeError(
            f"view/reshape of a nested tensor of shape {tuple(nt.shape)} to {list(new)}: only the dims "
            f"after the batch dim and its ragged/irregular dims {fixed} can change"
        )
    args[1] = _PerPart(lambda p: p._data.shape[: keep - 1] + new[keep:])
    return nt._ragged_idx


def _reductions() -> tuple:
    from ..ops import reduction

    return (reduction.Sum, reduction.Mean, reduction.Amax, reduction.Amin)


def _rules() -> dict:
    from ..nn.functional.attention import ScaledDotProductAttention
    from ..nn.functional.dropout import DropoutFunction
    from ..nn.functional.linear import LinearFunction
    from ..nn.functional.normalization import LayerNormFn
    from ..ops.linalg import Matmul
    from ..ops.shape import Clone, Permute, Split, Transpose, UnsafeView, View
    from ..ops.softmax import LogSoftmax, Softmax

    rules: dict = {
        LinearFunction: None,
        Matmul: None,
        Clone: None,
        DropoutFunction: _dropout,
        LayerNormFn: None,
    }
    rules[Softmax] = _dim_at(1, "softmax")
    rules[LogSoftmax] = _dim_at(1, "log_softmax")
    rules[Permute] = rules[Transpose] = _permute
    rules[ScaledDotProductAttention] = _no_mask
    rules[Split] = _split
    rules[View] = rules[UnsafeView] = _view
    return rules


_RULES: dict = {}
_ELEMENTWISE_MODULES = (  # (after the package's name: ``torch.`` under the alias)
    "ops.elementwise",
    "ops.special",
    "nn.functional.activation",
)


def _apply(fn: type, args: tuple) -> Any:
    """Run Function ``fn`` per constituent of the nested arguments, as PyTorch's nested ops."""
    if not _RULES:
        _RULES.update(_rules())
    nested = [a for a in args if isinstance(a, NestedTensor)]
    first = nested[0]
    for other in nested[1:]:
        if len(other._parts) != len(first._parts) or other._nt_layout is not first._nt_layout:
            raise RuntimeError(
                f"{fn.__name__}: nested tensors must have the same batch size and layout, got "
                f"{len(first._parts)} ({first._nt_layout}) and {len(other._parts)} ({other._nt_layout})"
            )
    if fn in _reductions():
        return _reduce(fn, first, args)
    if fn in _RULES:
        rule = _RULES[fn]
    elif fn.__module__.partition(".")[2] in _ELEMENTWISE_MODULES:
        rule = None
    else:
        raise NotImplementedError(
            f"{fn.__name__} is not supported on nested tensors (layout={first._nt_layout}): they support "
            "elementwise ops, linear, layer_norm, dropout, matmul/bmm, sum/mean/amax/amin and softmax/"
            "log_softmax over non-batch dims, transpose of non-batch dims, split/chunk of regular dims, view/reshape per constituent, flatten/unflatten of the dims after the ragged one and scaled_dot_product_attention; "
            "use unbind() or to_padded_tensor() for others"
        )
    plain = list(args)
    ragged = first._ragged_idx if rule is None else rule(first, plain)
    with dispatch_disabled():
        outs = [fn.apply(*(_arg_for(a, i, first) for a in plain)) for i in range(len(first._parts))]
    if not isinstance(outs[0], tuple):
        return NestedTensor._build(outs, first._nt_layout, ragged, first)
    return tuple(_extra_output([o[k] for o in outs], first, ragged) for k in range(len(outs[0])))


def _arg_for(a: Any, i: int, first: NestedTensor) -> Any:
    """Argument ``a`` for constituent ``i``."""
    if isinstance(a, NestedTensor):
        return a._parts[i]
    return a.of_part(first._parts[i]) if isinstance(a, _PerPart) else a


def _extra_output(outs: list, like: NestedTensor, ragged: int | None) -> Any:
    """One output of a multi-output Function: nested in ``like``'s layout, or strided when it
    has more ragged dims than the jagged layout holds (attention weights ``(H, j, j)``)."""
    if not isinstance(outs[0], Tensor):
        return outs[0]
    try:
        return NestedTensor._build(outs, like._nt_layout, ragged, like)
    except RuntimeError:
        return NestedTensor._build(outs, _layout.strided)
