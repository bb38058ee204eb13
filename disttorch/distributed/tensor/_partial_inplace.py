"""In-place ops on tensors that hold summands (``Partial`` placements): PyTorch's rules.

A ``Partial`` DTensor's memory is this rank's summand of the whole. An in-place op that
is linear (``mul_``/``div_`` by a scalar, ``neg_``, ``zero_``) acts on the whole when it
acts on each summand, and runs. Any other (``clamp_``, ``abs_``, ``pow_``, adding a
number, ...) would change each summand where PyTorch's sharding propagation would have
to reduce first, which an in-place op cannot do: PyTorch raises, and so does
:class:`PartialInplaceRules`, for a ``Partial`` DTensor (``p.grad`` of a sequence-parallel
norm weight, hence ``clip_grad_value_``) and for a summand a tensor hook receives.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from ..._tensor import Tensor
from .placement_types import Placement

__all__ = ["PartialInplaceRules", "refuse_on_partial"]

# in-place method -> the ATen overload PyTorch names in its error
_NONLINEAR = {
    **{
        name + "_": f"aten.{name}_.default"
        for name in (
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
            "floor",
            "ceil",
            "round",
            "trunc",
            "sign",
            "sgn",
            "clamp",
            "clamp_min",
            "clamp_max",
            "nan_to_num",
        )
    },
    "clip_": "aten.clamp_.default",
    "square_": "aten.pow_.Scalar",
    "pow_": "aten.pow_.Scalar",
    "fmod_": "aten.fmod_.Scalar",
    "remainder_": "aten.remainder_.Scalar",
}
_SCALAR_OTHER = {"add_": "aten.add_.Tensor", "sub_": "aten.sub_.Tensor", "subtract_": "aten.sub_.Tensor"}


def refuse_on_partial(op: str, placements: tuple[Placement, ...]) -> None:
    """Raise PyTorch's error for the non-linear in-place ``op`` on a ``Partial`` tensor."""
    raise RuntimeError(
        f"{op}: in-place operations that require placement changes are not supported. The input "
        f"has placement {placements}, but no valid strategy preserves this placement. Please use "
        f"the out-of-place version of this operation instead."
    )


def _guarded(name: str, op: str, scalar_only: bool) -> Callable:
    method = getattr(Tensor, name)

    @functools.wraps(method)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        placements = self._partial_placements()
        other = args[0] if args else kwargs.get("other")
        if placements is not None and not (scalar_only and isinstance(other, Tensor)):
            refuse_on_partial(op, placements)
        return method(self, *args, **kwargs)

    return guarded


class PartialInplaceRules:
    """Mixin (before ``Tensor``): the non-linear in-place methods refuse a tensor whose
    ``_partial_placements()`` is not None (its layout, ``Partial`` somewhere)."""

    def _partial_placements(self) -> tuple[Placement, ...] | None:
        raise NotImplementedError


for _name, _op in _NONLINEAR.items():
    setattr(PartialInplaceRules, _name, _guarded(_name, _op, scalar_only=False))
for _name, _op in _SCALAR_OTHER.items():
    setattr(PartialInplaceRules, _name, _guarded(_name, _op, scalar_only=True))
