"""``torch._foreach_*``: one op applied to every tensor of a list.

Optimisers and libraries (EMA helpers, gradient clipping, LAMB/LARS) call these on the
parameter list instead of looping. PyTorch fuses the loop into one kernel launch; here each
op is the ordinary per-tensor op, so results, dtypes, broadcasting and autograd are exactly
those of the single-tensor op. Out-of-place forms return a tuple; in-place forms (trailing
``_``) update the tensors and return the list they were given.

The second argument takes the forms PyTorch accepts: a number, a list of numbers (one per
tensor), a 0-dim tensor, or a list of tensors (``alpha`` only with tensors).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from numbers import Number
from typing import Any

from .._tensor import Tensor
from .linalg_functions import vector_norm

__all__: list[str] = []  # the functions are reached as torch._foreach_<op>, never star-imported


def _tensor_list(name: str, arg: Any, position: int = 1, what: str = "self") -> Sequence[Tensor]:
    """``arg`` checked to be a non-empty list/tuple of tensors, as PyTorch's binding checks."""
    if not isinstance(arg, (list, tuple)):
        raise TypeError(
            f"{name}(): argument '{what}' (position {position}) must be tuple of Tensors, not {type(arg).__name__}"
        )
    for i, t in enumerate(arg):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument {position - 1}, but got {type(t).__name__}"
            )
    if not arg:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return arg


def _same_length(self: Sequence, other: Sequence, scalars: bool = False) -> None:
    if len(self) != len(other):
        if scalars:
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        raise RuntimeError(
            f"Tensor lists must have the same number of tensors, got {len(self)} and {len(other)}"
        )


def _per_tensor(name: str, self: Sequence[Tensor], other: Any) -> list[Any]:
    """The second operand for each tensor of ``self``: a number, a list of numbers or of
    tensors (one each), or one 0-dim tensor shared by all."""
    if isinstance(other, Tensor):
        if other.dim() != 0:
            raise RuntimeError(
                f"scalar tensor expected to be 0 dim but it has {other.dim()} dimensions and "
                f"{other.numel()} elements."
            )
        return [other] * len(self)
    if isinstance(other, (list, tuple)):
        if other and isinstance(other[0], Tensor):
            other = _tensor_list(name, other, 2, "other")
            _same_length(self, other)
        else:
            _same_length(self, other, scalars=True)
        return list(other)
    if isinstance(other, Number):
        return [other] * len(self)
    raise TypeError(
        f"{name}(): the second argument must be a number, a list of numbers, a Tensor or a list of Tensors"
    )


def _finish(self: Sequence[Tensor], results: list[Tensor], inplace: bool) -> Any:
    return self if inplace else tuple(results)


def _unary(op: str, inplace: bool) -> Callable:
    method = op + "_" if inplace else op

    def fn(self: Sequence[Tensor]) -> Any:
        _tensor_list(_name(op, inplace), self)
        return _finish(self, [getattr(t, method)() for t in self], inplace)

    return fn


def _binary(op: str, inplace: bool, with_alpha: bool = False) -> Callable:
    method = op + "_" if inplace else op
    name = _name(op, inplace)

    def fn(self: Sequence[Tensor], other: Any, **kwargs: Any) -> Any:
        _tensor_list(name, self)
        others = _per_tensor(name, self, other)
        if kwargs and (not with_alpha or set(kwargs) != {"alpha"} or not isinstance(others[0], Tensor)):
            raise TypeError(f"{name}(): {sorted(kwargs)} is accepted only as alpha= with a Tensor operand")
        return _finish(
            self, [getattr(t, method)(o, **kwargs) for t, o in zip(self, others, strict=True)], inplace
        )

    return fn


def _pointwise(op: str, inplace: bool) -> Callable:
    """``addcmul``/``addcdiv``: ``self + value * t1 (*|/) t2``, ``value`` a number, a list of
    numbers or a 1-D tensor of them (one per tensor)."""
    method = op + "_" if inplace else op
    name = _name(op, inplace)

    def fn(self: Sequence[Tensor], tensor1: Any, tensor2: Any, value: Any = 1) -> Any:
        _tensor_list(name, self)
        t1, t2 = _tensor_list(name, tensor1, 2, "tensor1"), _tensor_list(name, tensor2, 3, "tensor2")
        _same_length(self, t1)
        _same_length(self, t2)
        values = value.tolist() if isinstance(value, Tensor) else value
        values = _per_tensor(name, self, values)
        results = [getattr(t, method)(a, b, value=v) for t, a, b, v in zip(self, t1, t2, values, strict=True)]
        return _finish(self, results, inplace)

    return fn


def _lerp(inplace: bool) -> Callable:
    method = "lerp_" if inplace else "lerp"
    name = _name("lerp", inplace)

    def fn(self: Sequence[Tensor], tensors1: Any, weight: Any) -> Any:
        _tensor_list(name, self)
        ends = _tensor_list(name, tensors1, 2, "tensors1")
        _same_length(self, ends)
        weights = _per_tensor(name, self, weight)
        return _finish(
            self, [getattr(t, method)(e, w) for t, e, w in zip(self, ends, weights, strict=True)], inplace
        )

    return fn


def _pow(inplace: bool) -> Callable:
    binary = _binary("pow", inplace)

    def fn(self: Any, exponent: Any) -> Any:
        if isinstance(self, Number) and not inplace:  # a number raised to each tensor
            return tuple(self**e for e in _tensor_list("_foreach_pow", exponent, 2, "exponent"))
        return binary(self, exponent)

    return fn


def _norm(self: Sequence[Tensor], ord: Number = 2, dtype: Any = None) -> tuple[Tensor, ...]:
    """The vector norm of each tensor (``torch.linalg.vector_norm``)."""
    _tensor_list("_foreach_norm", self)
    if not isinstance(ord, Number):
        raise TypeError(
            f"_foreach_norm(): argument 'ord' (position 2) must be Number, not {type(ord).__name__}"
        )
    return tuple(vector_norm(t, ord, dtype=dtype) for t in self)


def _max(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """The largest element of each tensor."""
    _tensor_list("_foreach_max", self)
    return tuple(t.max() for t in self)


def _copy_(self: Sequence[Tensor], src: Any, non_blocking: bool = False) -> Sequence[Tensor]:
    """Copy ``src[i]`` into ``self[i]`` (broadcasting, casting)."""
    _tensor_list("_foreach_copy_", self)
    src = _tensor_list("_foreach_copy_", src, 2, "src")
    _same_length(self, src)
    for t, s in zip(self, src, strict=True):
        t.copy_(s, non_blocking=non_blocking)
    return self


def _name(op: str, inplace: bool) -> str:
    return f"_foreach_{op}{'_' if inplace else ''}"


_UNARY = (
    "abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 log1p log2 neg "
    "reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc zero"
).split()
_BINARY = ("mul", "div", "maximum", "minimum", "clamp_min", "clamp_max")


def _clone(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """A copy of each tensor."""
    return tuple(t.clone() for t in _tensor_list("_foreach_clone", self))


def _define(op: str, inplace: bool, fn: Callable) -> None:
    fn.__name__ = fn.__qualname__ = _name(op, inplace)
    fn.__doc__ = fn.__doc__ or f"``torch.{op}{'_' if inplace else ''}`` of each tensor of the list."
    setattr(sys.modules[__name__], fn.__name__, fn)


def _install() -> None:
    """Define every ``_foreach_<op>`` and ``_foreach_<op>_`` in this module."""
    for inplace in (False, True):
        for op in _UNARY:
            if op != "zero" or inplace:  # only the in-place zero_ exists
                _define(op, inplace, _unary(op, inplace))
        for op in _BINARY:
            _define(op, inplace, _binary(op, inplace))
        for op in ("add", "sub"):
            _define(op, inplace, _binary(op, inplace, with_alpha=True))
        for op in ("addcmul", "addcdiv"):
            _define(op, inplace, _pointwise(op, inplace))
        _define("lerp", inplace, _lerp(inplace))
        _define("pow", inplace, _pow(inplace))
    for op, fn in (("clone", _clone), ("norm", _norm), ("max", _max)):
        _define(op, False, fn)
    _define("copy", True, _copy_)


_install()
