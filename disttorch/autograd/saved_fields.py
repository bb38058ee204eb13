"""``grad_fn._saved_<name>`` and ``grad_fn._raw_saved_<name>``: what a node saved, by PyTorch's names.

Each op's Function declares, beside its backward, a table ``_backward_saves`` from PyTorch's
field name (``self``, ``other``, ``result``, ``dim``, ...) to where its node keeps that value:

- :class:`saved` ``(i)``: the ``i``-th tensor given to ``save_for_backward``;
- :class:`kept` ``(attr)``: an attribute of the node holding an array or a tensor (``output=k``
  when it is the node's ``k``-th output, which is then unpacked with this node as ``grad_fn``);
- any other callable ``f(node)``: a value computed from what the node kept (sizes, dims,
  flags); it returns :data:`ABSENT` where the node, under its present name, has no such field.

The table may also be a function of the node returning such a dict, where one Function
stands for several of PyTorch's nodes (``MmBackward0`` and ``MvBackward0``, say).

``_saved_<name>`` gives the value (a saved tensor goes through the unpack hook it was packed
with, and raises once backward has freed it or when it was modified in place since);
``_raw_saved_<name>`` gives a :class:`SavedTensor` for a tensor field, whose
``register_hooks(pack, unpack)`` packs that one tensor now and unpacks it when backward runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _debug_flags
from .._tensor import Tensor
from . import saved_hooks

__all__ = [
    "ABSENT",
    "SavedTensor",
    "field_names",
    "kept",
    "lookup",
    "modified_inplace_message",
    "operand_fields",
    "pack_order",
    "saved",
]

#: returned by a computed field where the node has no such field
ABSENT = object()

FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved "
    "tensors after they have already been freed). Saved intermediate values of the "
    "graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)
_HOOKS_AFTER_FREE = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
    "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you "
    "need to access saved variables after calling backward."
)


def modified_inplace_message(
    t: Tensor, producer: Any, version: int, expected: int, transposed: bool = False
) -> str:
    """PyTorch's error for a tensor a backward needs that was changed in place since:
    ``[torch.FloatTensor [2, 3]], which is output 0 of Exp, is at version 1; ...`` (the
    producing node named without its ``Backward``, and its ``0``; nothing about a leaf).

    A view changed in place since its node was made is named by the node PyTorch regenerates
    for it, ``AsStrided``; so is the transposed view of ``t`` PyTorch keeps where disttorch
    keeps ``t`` itself (``transposed``: ``Linear``'s weight, as ``addmm`` saves ``W.t()``)."""
    which, shape = "", list(t.shape)
    if transposed:
        shape = shape[::-1]
        which = ", which is output 0 of AsStrided," if t._rg else ""
    elif producer is not None:
        moved = t._base is not None and t._version_box[0] != t._view_version and t._base._rg
        name = "AsStrided" if moved else re.sub(r"Backward0?(\d*)$", r"\1", producer.name())
        which = f", which is output {0 if moved else t._output_nr} of {name},"  # (LeakyRelu1, as PyTorch)
    if _debug_flags.is_anomaly_enabled():
        hint = (
            "Hint: the backtrace further above shows the operation that failed to compute its "
            "gradient. The variable in question was changed in there or anywhere later. Good luck!"
        )
    else:
        hint = (
            "Hint: enable anomaly detection to find the operation that failed to compute its "
            "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
        )
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{t.type()} {shape}]{which} is at version {version}; expected version "
        f"{expected} instead. {hint}"
    )


class saved:
    """The ``index``-th tensor of ``save_for_backward``; where that is None, ``otherwise(node)``
    (a Python number the op kept instead, say) when given."""

    def __init__(self, index: int, otherwise: Callable[[Any], Any] | None = None) -> None:
        self.key, self.otherwise = index, otherwise

    def stored(self, node: Any) -> Any:
        if node._freed:
            raise RuntimeError(FREED_MSG)
        saved = node._saved_unpacked()
        return saved[self.key] if self.key < len(saved) else None

    def value(self, node: Any) -> Any:
        t = self.stored(node)
        if t is None:
            return None if self.otherwise is None else self.otherwise(node)
        expected = node._saved_versions[self.key]
        if t._version_box[0] != expected:
            raise RuntimeError(modified_inplace_message(t, t.grad_fn, t._version_box[0], expected))
        return t


class kept:
    """The node's attribute ``attr`` (an array or a tensor); ``output``: the index of the
    node's output it holds, when it holds one."""

    def __init__(self, attr: str, output: int | None = None) -> None:
        self.key, self.output = attr, output

    def stored(self, node: Any) -> Any:
        return node.__dict__.get(self.key)

    def value(self, node: Any) -> Any:
        v = self.stored(node)
        if isinstance(v, np.ndarray):
            return Tensor._make(v) if self.output is None else Tensor._make(v, node, self.output)
        return v


def operand_fields(name: str, spec: Any, geometry: Callable[[Any], tuple] | None = None) -> dict:
    """A matrix product's operand ``name`` (a :class:`saved` or a function of the node) with
    the ``<name>_sym_sizes`` and ``<name>_sym_strides`` PyTorch saves beside it: the
    operand's own, or ``geometry(node)``'s ``(sizes, strides)`` recorded by the forward
    (strides ``()`` where the operand needs no gradient, whether or not it was kept)."""

    def operand(node: Any) -> Tensor:
        return spec.value(node) if isinstance(spec, (saved, kept)) else spec(node)

    def sym_sizes(node: Any) -> tuple:
        return tuple(operand(node).shape) if geometry is None else tuple(geometry(node)[0])

    def sym_strides(node: Any) -> tuple:
        return operand(node).stride() if geometry is None else tuple(geometry(node)[1])

    return {name: spec, name + "_sym_sizes": sym_sizes, name + "_sym_strides": sym_strides}


class SavedTensor:
    """One tensor a node saved (``torch._C._autograd.SavedTensor``): ``grad_fn._raw_saved_<name>``."""

    def __init__(self, node: Any, spec: saved | kept) -> None:
        self._node, self._spec = node, spec

    def register_hooks(
        self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]
    ) -> None:
        """Hand the tensor to ``pack_hook`` now and keep only what it returns; backward (and
        ``_saved_<name>``) get ``unpack_hook(packed)`` instead of the tensor."""
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError(
                "register_hooks(): incompatible function arguments: expected two callables "
                f"(pack_hook, unpack_hook), got {type(pack_hook).__name__} and {type(unpack_hook).__name__}"
            )
        node, key = self._node, self._spec.key
        if node._freed:
            raise RuntimeError(_HOOKS_AFTER_FREE)
        if node._packed is not None and key in node._packed:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor whose hooks have already been set. "
                "Hint: only one pair of hooks is allowed at a time."
            )
        if self._spec.stored(node) is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        saved_hooks.pack_one(node, key, pack_hook, unpack_hook)

    def __repr__(self) -> str:
        return f"<torch._C._autograd.SavedTensor object at {id(self):#x}>"


def _fields(node: Any) -> dict:
    """The node's table: its class's ``_backward_saves``, a dict, or a function of the node
    giving one (where the fields depend on which of PyTorch's nodes this one stands for)."""
    table = getattr(type(node), "_backward_saves", None)
    if callable(table):
        table = table(node)
    return table or {}


def pack_order(node: Any) -> list[int | str]:
    """The keys of the tensors ``node`` saved, in the order of its table: PyTorch's order of
    the fields, in which a saved-tensor pack hook sees them."""
    return [spec.key for spec in _fields(node).values() if isinstance(spec, (saved, kept))]


def _present(node: Any, spec: Any) -> bool:
    if isinstance(spec, saved):
        return True
    if isinstance(spec, kept):  # an attribute the node set, or one packed by a hook
        return spec.key in node.__dict__ or (node._packed is not None and spec.key in node._packed)
    try:
        return spec(node) is not ABSENT
    except RuntimeError:  # computed from a saved tensor backward has freed: there, unreadable
        return True


def lookup(node: Any, attr: str) -> Any:
    """``node._saved_<name>`` or ``node._raw_saved_<name>``; AttributeError where it has none."""
    raw = attr.startswith("_raw_saved_")
    field = attr[len("_raw_saved_") if raw else len("_saved_") :]
    spec = _fields(node).get(field)
    is_tensor = isinstance(spec, (saved, kept))
    if spec is None or (raw and not is_tensor) or not _present(node, spec):
        raise AttributeError(f"'{node.name()}' object has no attribute '{attr}'")
    if raw:
        cache = node.__dict__.setdefault("_raw_saved", {})
        if field not in cache:
            cache[field] = SavedTensor(node, spec)
        return cache[field]
    if not is_tensor:
        return spec(node)
    if node._freed:
        raise RuntimeError(FREED_MSG)
    if node._packed is not None and spec.key in node._packed:
        return saved_hooks.unpack_one(node, spec.key)
    return spec.value(node)


def field_names(node: Any) -> list[str]:
    """The ``_saved_*`` and ``_raw_saved_*`` names ``node`` answers (for ``dir``)."""
    names = []
    for field, spec in _fields(node).items():
        if _present(node, spec):
            names.append("_saved_" + field)
            if isinstance(spec, (saved, kept)):
                names.append("_raw_saved_" + field)
    return names
