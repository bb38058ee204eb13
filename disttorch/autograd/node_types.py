"""The classes graph nodes take so that ``type(t.grad_fn).__name__`` is PyTorch's node name.

PyTorch's nodes are instances of one C++ class per backward formula (``AddBackward0``,
``MmBackward0``; ``MyFnBackward`` for a user Function, made in ``torch.autograd.function``),
and programs print ``type(node).__name__`` while walking ``next_functions``. A disttorch node
is an instance of its op's Function (one class may stand for several of PyTorch's nodes, the
name then set per node), so once a node is made it moves to a subclass of its class that
carries the name: it behaves as before (``isinstance``, methods, saved fields).
"""

from __future__ import annotations

import types
from typing import Any

from .._public_name import package_name


class node_apply(classmethod):
    """A Function's ``apply``: called on the class, it runs forward and records a node
    (``MyFn.apply(x)``); looked up on a node of a Python Function (``y.grad_fn.apply(g)``), it
    runs that node's backward on ``g`` and returns what backward returns, as PyTorch's nodes
    of Python Functions do. Built-in ops' nodes keep the class's ``apply``."""

    def __get__(self, obj: Any, cls: type | None = None) -> Any:
        if obj is not None and obj._raw is False:
            return types.MethodType(type(obj).backward, obj)
        return super().__get__(obj, cls)


_classes: dict[tuple[type, str], type] = {}
_by_op: dict[type, type] = {}  # a Function's class -> its named subclass, for nodes not renamed


def unshown(cls: type) -> type:
    """The op's own class of a node's class (itself when it is not a named subclass)."""
    return cls.__base__ if cls.__dict__.get("_shown") else cls


def show_name(node: Any) -> None:
    """Move ``node`` to the subclass of its op's class named ``node.name()``."""
    renamed = "_node_name" in node.__dict__
    if not renamed:
        cls = _by_op.get(type(node))
        if cls is not None:  # the common case, once per op: no name to compute
            node.__class__ = cls
            return
    base = unshown(type(node))
    name = node.name()
    cls = _classes.get((base, name))
    if cls is None:
        cls = _classes[base, name] = _named_subclass(base, name)
    if not renamed and hasattr(base, "apply"):  # a Function's name is its class's
        _by_op[base] = cls
    node.__class__ = cls


def _named_subclass(base: type, name: str) -> type:
    user = getattr(base, "_raw", True) is False and "_node_name" not in base.__dict__
    ns: dict[str, Any] = {
        "__slots__": (),
        "__qualname__": name,
        "__module__": f"{package_name()}.autograd.function" if user else "builtins",
        "_shown": True,
    }
    if hasattr(base, "apply"):  # ``type(node).apply(...)`` records a node of the op's class
        ns["apply"] = node_apply(lambda _cls, *args: base.apply(*args))
    return type(base)(name, (base,), ns)
