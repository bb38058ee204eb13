"""Saved-tensor hooks: what ``torch.autograd.graph.saved_tensors_hooks`` installs.

While a pair ``(pack_hook, unpack_hook)`` is innermost on this thread's stack, every node the
autograd graph records hands what it saved for backward to ``pack_hook`` right after its
forward and keeps only what that returns; its backward gets ``unpack_hook(packed)`` back.
What a node saved is read from the node itself, so one place covers every op: the tensors of
``ctx.save_for_backward`` (user Functions, ``torch.library`` operators; tensors they keep as
plain ``ctx`` attributes are not saved tensors, as in PyTorch) and the arrays that built-in ops
keep as attributes of their node (each given to the hooks as a tensor). A built-in op whose
node names PyTorch's saved fields (``autograd.saved_fields``) hands the hooks those tensors
only, as PyTorch's node saves them (a weight PyTorch keeps as ``W.t()`` given transposed), so
``pack_hook`` sees what it sees in PyTorch; what else such an op keeps stays unhooked (but for
``allow_mutation_on_saved_tensors``, whose copies protect everything a node keeps). Other
ops hand over everything they keep, so their count of ``pack_hook`` calls may differ from
PyTorch's; the gradients do not.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._tensor import Tensor

__all__ = ["active", "forget_unpacked", "pack_one", "pack_saved", "push", "pop", "unpack_one", "unpack_saved"]

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


def pack_saved(node: Any, hooks: tuple[Callable, Callable], first: Sequence[int | str] = ()) -> None:
    """Replace what ``node`` saved by ``pack_hook``'s results (kept in ``node._packed``),
    packing the keys in ``first`` (PyTorch's order of the node's saved fields) before the rest;
    backward unpacks them in the same order."""
    pack, unpack = hooks
    # a user Function's saved tensors are only those of save_for_backward, as in PyTorch
    keys: list[int | str] = [
        name
        for name, value in (vars(node).items() if node._raw else ())
        if isinstance(value, (np.ndarray, Tensor))
    ]
    if node._saved:
        keys += [i for i, t in enumerate(node._saved_unpacked()) if t is not None]
    later = [k for k in keys if k not in first]
    if node._raw and first and not getattr(pack, "packs_everything", False):  # PyTorch's fields only
        later = [k for k in later if k in node._kept_transposed]
    for key in [k for k in first if k in keys] + later:
        pack_one(node, key, pack, unpack)


def pack_one(node: Any, key: int | str, pack: Callable, unpack: Callable) -> None:
    """Hand one thing ``node`` saved to ``pack`` and keep only its result, to be given to
    ``unpack`` when backward runs: ``key`` is an index into ``save_for_backward``'s
    tensors, or the name of an attribute holding an array or a tensor."""
    transposed = False
    if isinstance(key, int):
        saved = list(node._saved_unpacked())
        tensor, is_array = saved[key], False
        saved[key] = None
        node._saved = tuple(saved)
        transposed = key in node._kept_transposed and tensor.ndim == 2  # as PyTorch keeps it
        if transposed:
            tensor = tensor.t()
    else:
        value = node.__dict__.pop(key)
        is_array = isinstance(value, np.ndarray)
        tensor = Tensor._make(value) if is_array else value
    if node._packed is None:
        node._packed = {}
    node._packed[key] = (pack(tensor), is_array, unpack, transposed)


def unpack_one(node: Any, key: int | str) -> Tensor:
    """``unpack_hook``'s tensor for what ``node`` packed under ``key``."""
    packed, _, unpack, transposed = node._packed[key]
    tensor = unpack(packed)
    return tensor.t() if transposed else tensor


def unpack_saved(node: Any) -> None:
    """Put back on ``node`` what ``unpack_hook`` makes of each packed value."""
    saved = list(node._saved or ())
    versions = list(node._saved_versions)
    for key, (_, is_array, _, _) in node._packed.items():
        tensor = unpack_one(node, key)
        if isinstance(key, int):
            saved[key], versions[key] = tensor, tensor._version_box[0]
        else:
            setattr(node, key, tensor._data if is_array else tensor)
    node._saved, node._saved_versions = tuple(saved), tuple(versions)


def forget_unpacked(node: Any) -> None:
    """Drop the unpacked values again once backward used them (the packed ones stay)."""
    saved = list(node._saved or ())
    for key in node._packed:
        if isinstance(key, int):
            saved[key] = None
        else:
            node.__dict__.pop(key, None)
    node._saved = tuple(saved)
