"""The ``*_copy`` forms of the view ops (``torch.expand_copy``, ``permute_copy``,
``view_copy``, ``split_copy``, ...): the view's values in freshly allocated, contiguous
tensors (a tuple of them for the splitting ones), differentiable as the view is.
``detach_copy`` is a detached copy (PyTorch's has no derivative either)."""

from __future__ import annotations

import functools
from typing import Any, Callable

from .._memory_format import contiguous_format
from .._tensor import Tensor
from ..autograd.function import named_node
from .complex import view_as_complex, view_as_real

__all__ = ["narrow_copy"]  # the others are resolved on first use (``disttorch.__getattr__``)
TENSOR_METHODS = ("narrow_copy",)

#: the views whose copies are provided by calling ``input.<name>(*args)``
_METHOD_VIEWS = (
    "as_strided diagonal indices values ccol_indices col_indices crow_indices row_indices narrow "
    "permute select split split_with_sizes squeeze t transpose unbind unfold unsqueeze view"
).split()


def _slice(
    input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
) -> Tensor:
    dim = dim + input.dim() if dim < 0 else dim
    return input[(slice(None),) * dim + (slice(start, end, step),)]


def _expand(input: Tensor, size: Any, *, implicit: bool = False) -> Tensor:
    return input.expand(size)


#: the views that are functions here (PyTorch's signatures of the ``_copy`` forms)
_FUNCTION_VIEWS: dict[str, Callable[..., Any]] = {
    "slice": _slice,
    "expand": _expand,
    "alias": lambda input: input,
    "view_as_real": view_as_real,
    "view_as_complex": view_as_complex,
}


def _view_of(name: str) -> Callable[..., Any]:
    if name in _FUNCTION_VIEWS:
        return _FUNCTION_VIEWS[name]
    return lambda input, *args, **kwargs: getattr(Tensor, name)(input, *args, **kwargs)


def _fresh(out: Any, input: Tensor, view: str) -> Any:
    """The view(s) ``out`` of ``input`` copied; the node is named as PyTorch's: the view's
    node name with ``_copy`` (``ViewBackward0_copy``; ``narrow_copy``'s is ``NarrowCopyBackward0``)."""
    if isinstance(out, (tuple, list)):
        return tuple(_fresh(t, input, view) for t in out)
    copy = out.clone(memory_format=contiguous_format)
    if copy.grad_fn is None:
        return copy
    if view == "narrow":
        return named_node(copy, "NarrowCopyBackward0")
    return named_node(copy, ("AliasBackward0" if out is input else out.grad_fn.name()) + "_copy")


@functools.cache
def resolve(name: str) -> Callable[..., Any]:
    """``torch.<view>_copy`` for a name ending in ``_copy`` (AttributeError for others)."""
    view = name[: -len("_copy")] if name.endswith("_copy") else ""
    if view == "detach":

        def detach_copy(input: Tensor) -> Tensor:
            return input.detach().clone(memory_format=contiguous_format)

        return detach_copy
    if view not in _METHOD_VIEWS and view not in _FUNCTION_VIEWS:
        raise AttributeError(name)
    of = _view_of(view)

    def copy(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        return _fresh(of(input, *args, **kwargs), input, view)

    copy.__name__ = copy.__qualname__ = name
    copy.__doc__ = f"``{view}``'s result in fresh memory (differentiable as ``{view}`` is)."
    return copy


narrow_copy = resolve("narrow_copy")  # also a Tensor method, as in PyTorch
