"""The batching rules of ``vmap``, by family, and the dispatch to them.

Each rule takes ``(func, level, args, kwargs)`` with some arguments batched at ``level``,
calls ``func`` (or other public functions) once on their values (the real tensors, batch dim
in front) and returns the result batched at ``level``; a rule that does not cover a call
returns ``NotImplemented`` and the call runs once per slice (:func:`._batched.per_slice`).
Families: pointwise ops with broadcasting (the batched values padded to a common rank), ops
with ``dim=`` arguments (dims shifted past the batch), reshaping and indexing, the matrix
products, concatenation, the image ops (the batch folded into ``N``), losses, random ops
(``randomness``), and the metadata and data-dependent methods.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._random import BATCHED_DRAWS, DRAW_GUARDS
from ._batch_pointwise import in_place_error, pointwise, tensors_of
from ._batch_rules_linalg import LINALG_FUNCTION_RULES, LINALG_RULES
from ._batch_rules_namespaces import NAMESPACE_RULES
from ._batch_rules_nn import NN_RULES, RANDOM_OPS, RANDOMNESS_ERROR, random_rule
from ._batch_rules_shape import SHAPE_FUNCTION_RULES, SHAPE_RULES
from ._batched import (
    DATA_DEPENDENT,
    DISPATCH,
    BatchedTensor,
    Level,
    active_levels,
    level_of,
    per_slice,
    rewrap,
    top_level,
)

__all__ = ["activate", "apply_rule"]


_IN_PLACE_OPERATORS = frozenset(
    f"__i{op}__" for op in "add sub mul truediv floordiv mod pow and or xor lshift rshift matmul".split()
)


def _is_inplace(name: str) -> bool:
    return (name.endswith("_") and not name.endswith("__")) or name in _IN_PLACE_OPERATORS


def _inplace(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """An in-place op: only into a tensor batched at ``level`` (PyTorch's error otherwise)."""
    self = args[0]
    if level_of(self) is not level:
        others = [x for x in tensors_of(args[1:], kwargs) if level_of(x) is level]
        raise in_place_error(self, [[level.size, *x.shape] for x in others])
    name = func.__name__
    base = name[3:-2] if name.startswith("__i") else name[:-1]
    if base in POINTWISE:
        pointwise(func, level, args, kwargs)
    else:
        per_slice(func, level, args, kwargs, inplace=True)
    return self


#: elementwise ops (their in-place forms too), functions, methods and operators
POINTWISE = frozenset(
    """add sub subtract mul multiply div divide true_divide floor_divide remainder fmod pow float_power
    atan2 arctan2 maximum minimum fmax fmin hypot copysign logaddexp logaddexp2 xlogy nextafter heaviside
    eq ne lt le gt ge greater less greater_equal less_equal not_equal
    logical_and logical_or logical_xor logical_not bitwise_and bitwise_or bitwise_xor bitwise_not
    __add__ __radd__ __sub__ __rsub__ rsub __mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__
    __rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __neg__ __pos__ __abs__ __invert__ __and__ __rand__
    __or__ __ror__ __xor__ __rxor__ __lshift__ __rlshift__ __rshift__ __rrshift__ __eq__ __ne__ __lt__
    __le__ __gt__ __ge__
    neg negative positive abs absolute exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan asin
    acos atan arcsin arccos arctan sinh cosh tanh asinh acosh atanh arcsinh arccosh arctanh sigmoid
    logit relu relu6 gelu silu mish elu selu celu leaky_relu hardtanh hardsigmoid hardswish softplus
    softsign tanhshrink logsigmoid hardshrink softshrink threshold erf erfc erfinv floor ceil round trunc
    fix frac sign sgn signbit reciprocal square clamp clip clamp_min clamp_max where masked_fill lerp
    addcmul addcdiv nan_to_num isnan isinf isfinite isposinf isneginf isreal i0 digamma lgamma polygamma
    deg2rad rad2deg sinc angle conj conj_physical real imag
    float double half bfloat16 int long short bool byte char cfloat cdouble to type_as cpu cuda
    contiguous clone detach data zeros_like ones_like full_like empty_like
    fill zero copy""".split()
)


def _metadata(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """Sizes and kinds: answered from the logical shape and dtype (the wrapper's own array)."""
    from .._torch_function import DisableTorchFunctionSubclass

    self = args[0]
    if func.__name__ == "is_contiguous":
        return True
    if func.__name__ == "type" and (len(args) > 1 or kwargs):
        return pointwise(func, level, args, kwargs)
    with DisableTorchFunctionSubclass():
        return func(*args, **kwargs) if level_of(self) is level else NotImplemented


_METADATA = frozenset(
    "size dim ndimension numel nelement element_size is_floating_point is_complex is_signed get_device "
    "is_contiguous __len__ type storage_offset is_inference is_nonzero".split()
)

_ITEM = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on a "
    "Tensor, please try to rewrite what you're doing with other operations. If error is occurring somewhere "
    "inside PyTorch internals, please file a bug report."
)


def _refuse(message: str) -> Callable:
    def rule(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
        raise RuntimeError(message)

    return rule


def _repr(func: Callable, level: Level, args: tuple, kwargs: dict) -> str:
    x = args[0]
    return f"BatchedTensor(lvl={level.number}, bdim=0, value=\n{x._bt_value!r}\n)"


def _new_factory(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """``x.new_zeros(size)`` and kin: an unbatched tensor of ``x``'s dtype."""
    if any(level_of(x) is level for x in tensors_of(args[1:], kwargs)):
        return NotImplemented
    return func(args[0]._bt_value, *args[1:], **kwargs)


def _requires_grad_(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    self = args[0]
    self._bt_value.requires_grad_(*args[1:], **kwargs)
    self._rg = self._bt_value.requires_grad
    return self


def _no_backward(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    raise RuntimeError(
        "vmap: calling .backward() on a batched tensor is not supported: compute gradients with "
        "torch.func.grad or torch.func.vjp inside the vmapped function instead"
    )


RULES: dict[str, Callable] = {
    **dict.fromkeys(POINTWISE, pointwise),
    **dict.fromkeys(_METADATA, _metadata),
    **dict.fromkeys(
        ("item", "tolist", "numpy", "__float__", "__int__", "__index__", "__complex__"), _refuse(_ITEM)
    ),
    "__repr__": _repr,
    **dict.fromkeys(("new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"), _new_factory),
    "requires_grad_": _requires_grad_,
    "retain_grad": lambda func, level, args, kwargs: None,
    "backward": _no_backward,
    "__bool__": _refuse(DATA_DEPENDENT),
    "where": lambda func, level, args, kwargs: (
        pointwise(func, level, args, kwargs) if len(args) + len(kwargs) > 1 else NotImplemented
    ),
    **SHAPE_RULES,
    **LINALG_RULES,
    **NN_RULES,
    **NAMESPACE_RULES,
}


#: rules for autograd Functions (by class name) reached with batched arguments
FUNCTION_RULES: dict[str, Callable] = {**LINALG_FUNCTION_RULES, **SHAPE_FUNCTION_RULES}


#: public module -> the prefix of its own rules (see ``_batch_rules_namespaces``); True: only those
_NAMESPACES = {
    "functional": ("F.", False),
    "disttorch.linalg": ("linalg.", True),
    "disttorch.fft": ("fft.", True),
    "disttorch.special": ("special.", False),
}


def _rule(name: str, func: Callable) -> Callable | None:
    module = getattr(func, "__module__", "")
    own = _NAMESPACES.get("functional" if module.endswith("functional") else module)
    if own is not None:
        special = RULES.get(own[0] + name)
        if special is not None or own[1]:
            return special
    return RULES.get(name)


def apply_rule(func: Callable, level: Level, args: tuple, kwargs: dict) -> Any:
    """``func(*args, **kwargs)`` with arguments batched at ``level``: its rule, else once per slice."""
    name = getattr(func, "__name__", "")
    if name in RANDOM_OPS:
        return random_rule(func, level, args, kwargs)
    if _is_inplace(name) and name not in ("requires_grad_",):
        return _inplace(func, level, args, kwargs)
    rule = _rule(name, func)
    if rule is not None:
        out = rule(func, level, args, kwargs)
        if out is not NotImplemented:
            return out
    return per_slice(func, level, args, kwargs)


DISPATCH.append(apply_rule)
_activated = [False]


def activate() -> None:
    """Make every public function and Tensor method hand batched arguments to
    ``BatchedTensor.__torch_function__`` (once, on the first ``vmap``)."""
    if not _activated[0]:
        from .._function_dispatch import install_everywhere
        from ..autograd.function import register_function_dispatch

        install_everywhere()
        register_function_dispatch(BatchedTensor, _function_apply)
        DRAW_GUARDS.append(_refuse_draws)
        BATCHED_DRAWS.append(_draw_per_sample)
        _activated[0] = True


def _refuse_draws() -> None:
    """A random draw under a ``vmap`` level whose ``randomness`` is ``"error"`` (a draw that
    takes no batched tensor, such as ``torch.rand(3)``, reaches no rule)."""
    if any(level.randomness == "error" for level in active_levels()):
        raise RuntimeError(RANDOMNESS_ERROR)


def _draw_per_sample(make: Callable[[tuple], Any]) -> Any:
    """A random factory's draw (``torch.rand(3)``): one sample per entry of each running level
    whose ``randomness`` is ``"different"`` (unless an op runs per slice of it), batched there."""
    levels = [lv for lv in active_levels() if lv.randomness == "different" and not lv.slicing]
    if not levels:
        return make(())
    return rewrap(make(tuple(lv.size for lv in levels)), levels)


def _function_apply(function: Any, args: tuple) -> Any:
    """An autograd Function reached with a batched argument (through a path that never asked
    ``__torch_function__``, such as a function of ``torch.linalg``, or a backward formula in a
    batched backward pass): its rule, else applied once per slice."""
    level = top_level(args, {})
    rule = FUNCTION_RULES.get(function.__name__)
    if rule is not None:
        out = rule(function.apply, level, args, {})
        if out is not NotImplemented:
            return out
    return per_slice(function.apply, level, args, {})
