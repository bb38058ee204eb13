"""``torch.utils.swap_tensors``: exchange the contents of two tensor objects in place."""

from __future__ import annotations

import copyreg
import weakref

from .._tensor import Tensor

__all__ = ["swap_tensors"]

_POISONED = (
    "Trying to execute AccumulateGrad node that was poisoned by swap_tensors "
    "this can happen when you try to run backward on a tensor that was swapped. "
    "For a module m with `torch.__future__.set_swap_module_params_on_conversion(True)` "
    "you should not change the device or dtype of the module (e.g. `m.cpu()` or `m.half()`) "
    "between running forward and backward. To resolve this, please only change the "
    "device/dtype before running forward (or after both forward and backward)."
)


def _poisoned_hook(grad: Tensor) -> None:
    raise RuntimeError(_POISONED)


def _poison_accumulator(t: Tensor) -> None:
    """A graph recorded before the swap must not accumulate into the swapped leaf: its
    gradient accumulator raises PyTorch's error when backward reaches it."""
    node = t._acc() if t._acc is not None else None  # the tensor keeps a weak reference
    if node is not None:
        hooks = dict(node._pre_hooks or {})
        hooks[0] = [*hooks.get(0, ()), _poisoned_hook]
        node._pre_hooks = hooks


def swap_tensors(t1: Tensor, t2: Tensor) -> None:
    """Swap everything two tensors hold (class, ``__dict__``, data, gradient, autograd
    state), so that ``t1`` shows what ``t2`` held and the other way round while every
    reference to either object stays valid.

    Raises RuntimeError when either tensor has a weak reference or their classes' slots
    differ. A leaf's gradient accumulator from before the swap raises if backward reaches it.
    """
    if not isinstance(t1, Tensor) or not isinstance(t2, Tensor):
        raise TypeError(f"swap_tensors expects two Tensors, got {type(t1).__name__} and {type(t2).__name__}")
    if weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    slots = set(copyreg._slotnames(type(t1)))
    if slots != set(copyreg._slotnames(type(t2))):
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    _poison_accumulator(t1)
    _poison_accumulator(t2)
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    for name in sorted(slots - {"__dict__", "__weakref__"}):  # Tensor's slots and a subclass's
        missing = object()
        a, b = getattr(t1, name, missing), getattr(t2, name, missing)
        for obj, value in ((t1, b), (t2, a)):
            if value is missing:
                if hasattr(obj, name):
                    delattr(obj, name)
            else:
                setattr(obj, name, value)
    for t in (t1, t2):
        t._acc = None  # the next graph records a fresh accumulator for what it now holds
