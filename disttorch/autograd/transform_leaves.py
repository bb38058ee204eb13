"""Tensors made to require grad only so that a transform can differentiate through them:
forward-mode AD's duals of primals that did not require grad, and the inputs ``torch.func``'s
transforms track. PyTorch's argument checks read them differently from a tensor that requires
grad of its own (``binary_cross_entropy`` refuses a ``weight`` that does), so those checks ask
:func:`transform_kinds` which transforms a tensor requires grad for:

- ``"dual"``: forward-mode AD's dual (``autograd.forward_ad``): PyTorch's carries a tangent, which
  the checks pass and an op without a derivative for that argument ignores;
- ``"jvp"``: a forward ``torch.func`` transform's input (``jvp``, ``jacfwd``): as a dual, except
  through the ops ``torch.func`` decomposes into differentiable ones
  (``binary_cross_entropy_with_logits``), whose tangents flow;
- ``"vjp"``: a reverse one's (``grad``, ``vjp``, ``jacrev``): refused as a tensor of its own,
  except by those decomposed ops, where its gradient flows;
- ``"own"``: a leaf the user made require grad (or anything else that is not marked).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from .._tensor import Tensor

__all__ = ["mark", "reaches_leaf", "transform_kinds"]

KINDS = ("dual", "jvp", "vjp")

#: kind -> the tensors marked with it, by id (not a WeakSet: a tensor's ``==`` is elementwise)
_LEAVES: dict[str, weakref.WeakValueDictionary] = {k: weakref.WeakValueDictionary() for k in KINDS}
#: kind -> the nodes of marked tensors that have a history of their own (a forward transform's
#: input that an enclosing transform tracks already: a view of it), by id
_NODES: dict[str, weakref.WeakValueDictionary] = {k: weakref.WeakValueDictionary() for k in KINDS}


def mark(tensor: Tensor, kind: str) -> Tensor:
    """Record ``tensor`` as requiring grad for a transform of ``kind``; returns it. A leaf
    requires grad for that transform only; a tensor with a ``grad_fn`` (a view tracked by an
    enclosing transform too) is reported with ``kind`` besides its leaves' kinds."""
    if tensor.grad_fn is not None:
        _NODES[kind][id(tensor.grad_fn)] = tensor.grad_fn
    else:
        _LEAVES[kind][id(tensor)] = tensor
    return tensor


def _kind(leaf: Tensor) -> str:
    for kind, leaves in _LEAVES.items():
        if leaves.get(id(leaf)) is leaf:
            return kind
    return "own"


def transform_kinds(tensor: Tensor) -> set[str]:
    """The kinds of the leaves ``tensor`` requires grad through (empty when it does not
    require grad): ``"own"``, or a transform's (see the module docstring)."""
    if not tensor.requires_grad:
        return set()
    if not any(_LEAVES.values()) and not any(_NODES.values()):
        return {"own"}
    if tensor.grad_fn is None:
        return {_kind(tensor)}
    kinds: set[str] = set()
    marked = [(k, nodes) for k, nodes in _NODES.items() if nodes]

    def note(node: object) -> bool:
        for kind, nodes in marked:
            if nodes.get(id(node)) is node:
                kinds.add(kind)
        return False

    reaches_leaf(tensor, lambda leaf: kinds.add(_kind(leaf)) or False, note if marked else None)
    return kinds


def reaches_leaf(
    tensor: Tensor, wanted: Callable[[Tensor], bool], wanted_node: Callable[[object], bool] | None = None
) -> bool:
    """Whether a backward pass from ``tensor`` (which has a ``grad_fn``) reaches a leaf for
    which ``wanted(leaf)`` holds (or a node for which ``wanted_node(node)`` does)."""
    todo, seen = [tensor.grad_fn], set()
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if wanted_node is not None and wanted_node(node):
            return True
        leaf = getattr(node, "variable", None)
        if leaf is not None and wanted(leaf):
            return True
        todo += [n for n, _ in node.next_functions]
    return False
