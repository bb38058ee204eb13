"""Saved-tensor hooks: what ``torch.autograd.graph.saved_tensors_hooks`` installs.

While a pair ``(pack_hook, unpack_hook)`` is innermost on this thread's stack, every node the
autograd graph records hands what it saved for backward to ``pack_hook`` right after its
forward and keeps only what that returns; its backward gets ``unpack_hook(packed)`` back.
What a node saved is read from the node itself, so one place covers every op: the tensors of
``ctx.save_for_backward`` (user Functions, ``torch.library`` operators; tensors they keep as
plain ``ctx`` attributes are not saved tensors, as in PyTorch) and the arrays that built-in ops
keep as attributes of their node (each given to the hooks as a tensor). Which
tensors an op saves is its own choice, so the number of ``pack_hook`` calls may differ
from PyTorch's for the same op; the gradients do not.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor

__all__ = ["active", "forget_unpacked", "pack_saved", "push", "pop", "unpack_saved"]

_local = threading.local()
#: how many hook pairs are installed on any thread (a cheap test before the thread-local one)
_installed = [0]


def _stack() -> list:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def push(hooks: tuple[Callable, Callable] | str) -> None:
    """Install a ``(pack, unpack)`` pair, or a message: while a message is innermost, installing
    a pair raises it (``disable_saved_tensors_hooks``)."""
    stack = _stack()
    if not isinstance(hooks, str) and stack and isinstance(stack[-1], str):
        raise RuntimeError(stack[-1])
    stack.append(hooks)
    _installed[0] += 1


def pop() -> None:
    _stack().pop()
    _installed[0] -= 1


def active() -> tuple[Callable, Callable] | None:
    """The innermost hook pair of this thread, or None."""
    if not _installed[0]:
        return None
    stack = _stack()
    return stack[-1] if stack and not isinstance(stack[-1], str) else None


def pack_saved(node: Any, hooks: tuple[Callable, Callable]) -> None:
    """Replace what ``node`` saved by ``pack_hook``'s results (kept in ``node._packed``)."""
    pack, unpack = hooks
    packed: dict[str, Any] = {}
    # a user Function's saved tensors are only those of save_for_backward, as in PyTorch
    for name, value in list(vars(node).items()) if node._raw else ():
        if isinstance(value, np.ndarray):
            packed[name] = (pack(Tensor._make(value)), True)
        elif isinstance(value, Tensor):
            packed[name] = (pack(value), False)
        else:
            continue
        delattr(node, name)
    saved = node._saved_unpacked() if node._saved else ()
    if saved:
        packed["_saved"] = tuple(None if t is None else pack(t) for t in saved)
        node._saved = ()
    node._packed = (packed, unpack)


def unpack_saved(node: Any) -> None:
    """Put back on ``node`` what ``unpack_hook`` makes of each packed value."""
    packed, unpack = node._packed
    for name, value in packed.items():
        if name == "_saved":
            node._saved = tuple(None if p is None else unpack(p) for p in value)
            node._saved_versions = tuple(0 if t is None else t._version_box[0] for t in node._saved)
        else:
            tensor = unpack(value[0])
            setattr(node, name, tensor._data if value[1] else tensor)


def forget_unpacked(node: Any) -> None:
    """Drop the unpacked values again once backward used them (the packed ones stay)."""
    for name in node._packed[0]:
        if name == "_saved":
            node._saved = ()
        else:
            node.__dict__.pop(name, None)
