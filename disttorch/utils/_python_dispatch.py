"""``torch.utils._python_dispatch``: the helpers wrapper tensor subclasses import.

disttorch has no dispatcher below its Python functions: a wrapper subclass's
``__torch_dispatch__`` is reached from the public functions themselves, which hand it the
ATen operators PyTorch's dispatcher would (see ``disttorch.ops.aten_dispatch``), so there
are no modes on a dispatch stack to disable or report, and ``TorchDispatchMode`` can be defined (libraries subclass it at import) but not
entered. The subclass helpers (``is_traceable_wrapper_subclass``, ``transform_subclass``,
``return_and_correct_aliasing``) work as PyTorch's do for such subclasses."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from .._tensor import Tensor

__all__ = [
    "TorchDispatchMode",
    "is_traceable_wrapper_subclass",
    "is_traceable_wrapper_subclass_type",
    "return_and_correct_aliasing",
    "transform_subclass",
]


class TorchDispatchMode:
    """The base of PyTorch's dispatch modes. Subclassing works; entering one raises, since no
    ATen-level dispatch exists to hand it operators (``TorchFunctionMode`` sees the calls)."""

    def __init__(self, _dispatch_key: Any = None) -> None:
        pass

    def __torch_dispatch__(
        self, func: Callable, types: Any, args: tuple = (), kwargs: dict | None = None
    ) -> Any:
        raise NotImplementedError

    def __enter__(self) -> TorchDispatchMode:
        raise NotImplementedError(
            f"{type(self).__name__}: disttorch has no ATen dispatcher, so a TorchDispatchMode cannot "
            "intercept operators; use torch.overrides.TorchFunctionMode to see torch calls"
        )

    def __exit__(self, *exc: object) -> None:
        pass

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchDispatchMode:
        """Make a mode and enter it (which raises, see the class)."""
        return cls(*args, **kwargs).__enter__()


def _get_current_dispatch_mode() -> None:
    """The innermost dispatch mode: none is ever entered here."""
    return None


def _get_current_dispatch_mode_stack() -> list:
    """The dispatch modes entered: none."""
    return []


@contextlib.contextmanager
def _disable_current_modes() -> Iterator[list]:
    """Run a block without the current dispatch modes (there are none); yields them."""
    yield []


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
