"""``torch.utils._python_dispatch``: the helpers wrapper tensor subclasses import.

disttorch has no dispatcher below its Python functions: a wrapper subclass's
``__torch_dispatch__``, and an entered ``TorchDispatchMode``'s, is reached from the public
functions and Tensor methods themselves, which hand it the ATen operators PyTorch's
dispatcher would (see ``disttorch.ops.aten_dispatch``). The subclass helpers (``is_traceable_wrapper_subclass``, ``transform_subclass``,
``return_and_correct_aliasing``) work as PyTorch's do for such subclasses."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from .._tensor import Tensor
from .._torch_function import DISPATCH_MODES

__all__ = [
    "TorchDispatchMode",
    "is_traceable_wrapper_subclass",
    "is_traceable_wrapper_subclass_type",
    "return_and_correct_aliasing",
    "transform_subclass",
]


class TorchDispatchMode:
    """A mode whose ``__torch_dispatch__(func, types, args, kwargs)`` is handed the ATen
    operator of every torch function and Tensor method called on tensors while it is entered
    (and of the factories ``zeros``, ``arange``, ``randn``...), as PyTorch's dispatcher hands
    them (see ``disttorch.ops.aten_dispatch``); inside it the mode is off, so ``func(*args)``
    runs the operator (through the modes below it). Modes nest; they are per process.
    Differences: autograd is disttorch's own, so the backward pass's operators reach the
    mode as the Tensor operations disttorch's backward formulas run, and operators that
    disttorch computes inside one op (a layer's fused kernel) are not seen one by one."""

    def __init__(self, _dispatch_key: Any = None) -> None:
        pass

    def __torch_dispatch__(
        self, func: Callable, types: Any, args: tuple = (), kwargs: dict | None = None
    ) -> Any:
        raise NotImplementedError

    def __enter__(self) -> TorchDispatchMode:
        from .._function_dispatch import install_everywhere

        install_everywhere()  # the public functions and Tensor methods hand calls on
        DISPATCH_MODES.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if DISPATCH_MODES and DISPATCH_MODES[-1] is self:
            DISPATCH_MODES.pop()
        elif self in DISPATCH_MODES:
            DISPATCH_MODES.remove(self)

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchDispatchMode:
        """Make a mode and enter it."""
        return cls(*args, **kwargs).__enter__()

    @classmethod
    def is_infra_mode(cls) -> bool:
        return False


def _get_current_dispatch_mode() -> TorchDispatchMode | None:
    """The innermost dispatch mode entered, or None."""
    return DISPATCH_MODES[-1] if DISPATCH_MODES else None


def _get_current_dispatch_mode_stack() -> list:
    """The dispatch modes entered, outermost first."""
    return list(DISPATCH_MODES)


@contextlib.contextmanager
def _disable_current_modes() -> Iterator[list]:
    """Run a block without the current dispatch modes; yields them."""
    saved = list(DISPATCH_MODES)
    DISPATCH_MODES.clear()
    try:
        yield saved
    finally:
        DISPATCH_MODES[:] = saved + DISPATCH_MODES


def is_traceable_wrapper_subclass_type(kind: type) -> bool:
    """Whether ``kind`` is a Tensor subclass that flattens to inner tensors
    (``__tensor_flatten__``/``__tensor_unflatten__``) and computes in ``__torch_dispatch__``."""
    return (
        isinstance(kind, type)
        and issubclass(kind, Tensor)
        and kind is not Tensor
        and hasattr(kind, "__tensor_flatten__")
        and hasattr(kind, "__tensor_unflatten__")
    )


def is_traceable_wrapper_subclass(t: Any) -> bool:
    """:func:`is_traceable_wrapper_subclass_type` of ``type(t)``."""
    return is_traceable_wrapper_subclass_type(type(t))


def transform_subclass(
    t: Tensor, callback: Callable, outer_size: Any = None, outer_stride: Any = None
) -> Tensor:
    """A new ``type(t)`` from ``t``'s inner tensors, each passed through
    ``callback(attribute_name, inner_tensor)``."""
    attrs, ctx = t.__tensor_flatten__()
    inner = {name: callback(name, getattr(t, name)) for name in attrs}
    size = t.size() if outer_size is None else outer_size
    stride = t.stride() if outer_stride is None else outer_stride
    return type(t).__tensor_unflatten__(inner, ctx, size, stride)


def return_and_correct_aliasing(func: Callable, args: tuple, kwargs: dict, out: Any) -> Any:
    """``out`` as a ``__torch_dispatch__`` returns it (PyTorch also re-ties the storages of
    in-place and view results to their inputs; here results keep what the op made)."""
    return out
