"""``torch.cond`` and ``torch.while_loop``: control flow written as operators, which PyTorch's
compilers capture as one node of a graph. disttorch runs them eagerly, as PyTorch does outside
a compiler: a Python ``if``/``while`` over the functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _dtype
from .._tensor import Tensor

__all__ = ["cond", "while_loop"]


def _truth(pred: Any, what: str) -> bool:
    """A predicate's value: a bool or number, or a tensor of one element."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected {what} to be bool or single-element tensor, but got {pred}.")
        return bool(pred.item())
    if not isinstance(pred, (bool, int, float)):
        raise RuntimeError(f"Expected {what} to be bool or single-element tensor, but got {pred!r}.")
    return bool(pred)


def cond(pred: Any, true_fn: Callable, false_fn: Callable, operands: tuple | list = ()) -> Any:
    """``true_fn(*operands)`` if ``pred`` (a bool or one-element tensor) holds, else
    ``false_fn(*operands)``. A predicate being traced (``torch.export``, ``fx``) raises fx's
    ``TraceError``: disttorch's graphs have no node for ``cond``, and taking the branch the
    example takes would make a graph that is wrong for the other inputs."""
    from ..fx.proxy import Proxy, TraceError

    if issubclass(type(pred), Proxy):  # (type(): a proxy passes isinstance(pred, Tensor))
        raise TraceError(
            "torch.cond with a predicate computed from the traced inputs cannot be captured by "
            "disttorch's export/fx tracing (it would bake in the branch the example takes)"
        )
    return (true_fn if _truth(pred, "pred") else false_fn)(*operands)


def _tensor_or_int_leaves(tree: Any) -> bool:
    if isinstance(tree, (tuple, list)):
        return all(_tensor_or_int_leaves(t) for t in tree)
    if isinstance(tree, dict):
        return all(_tensor_or_int_leaves(t) for t in tree.values())
    return isinstance(tree, (Tensor, int))


def _loop_test(pred: Any) -> bool:
    if isinstance(pred, bool) or (isinstance(pred, Tensor) and pred.dim() == 0 and pred.dtype is _dtype.bool):
        return bool(pred)
    raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a boolean but got {pred}")


def while_loop(cond_fn: Callable, body_fn: Callable, carried_inputs: tuple | list) -> Any:
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)`` (a bool, or a boolean
    0-d tensor) holds, and return the last values: ``body_fn``'s last result, or copies of
    ``carried_inputs`` (tensors or ints) when it never ran. A body result that is not a tuple
    or list is carried as the only value."""
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list but got {type(carried_inputs)}")
    if not _tensor_or_int_leaves(carried_inputs):
        raise RuntimeError(
            "Expect carried_inputs to be a tuple of possibly nested dict/list/tuple that only "
            f"consists of tensor or int leaves, but got {carried_inputs}."
        )
    result: Any = None
    carried = tuple(carried_inputs)
    while _loop_test(cond_fn(*carried)):
        result = body_fn(*carried)
        carried = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if result is None:
        return type(carried_inputs)(t.clone() if isinstance(t, Tensor) else t for t in carried_inputs)
    return result
