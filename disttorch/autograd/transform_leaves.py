"""Tensors made to require grad only so that a transform can differentiate through them:
forward-mode AD's duals of primals that did not require grad, and the inputs ``torch.func``'s
transforms track. PyTorch's own tensors there do not require grad in the sense its argument
checks read (``binary_cross_entropy`` refusing a ``weight`` that requires grad), so those
checks ask :func:`requires_grad_of_its_own`."""

from __future__ import annotations

import weakref
from collections.abc import Callable

from .._tensor import Tensor

__all__ = ["mark", "reaches_leaf", "requires_grad_of_its_own"]

#: the marked tensors by id (not a WeakSet: a tensor's ``==`` is elementwise)
_LEAVES: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def mark(tensor: Tensor) -> Tensor:
    """Record ``tensor`` as requiring grad for a transform only; returns it."""
    _LEAVES[id(tensor)] = tensor
    return tensor


def _marked(tensor: Tensor) -> bool:
    return _LEAVES.get(id(tensor)) is tensor


def requires_grad_of_its_own(tensor: Tensor) -> bool:
    """Whether ``tensor`` requires grad through a tensor other than a transform's (a leaf the
    user made require grad, or a result of one)."""
    if not tensor.requires_grad:
        return False
    if not _LEAVES:
        return True
    if tensor.grad_fn is None:
        return not _marked(tensor)
    return reaches_leaf(tensor, lambda leaf: not _marked(leaf))


def reaches_leaf(tensor: Tensor, wanted: Callable[[Tensor], bool]) -> bool:
    """Whether a backward pass from ``tensor`` (which has a ``grad_fn``) reaches a leaf for
    which ``wanted(leaf)`` holds."""
    todo, seen = [tensor.grad_fn], set()
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        leaf = getattr(node, "variable", None)
        if leaf is not None and wanted(leaf):
            return True
        todo += [n for n, _ in node.next_functions]
    return False
