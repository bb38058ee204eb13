"""The tracer behind ``torch.export``: ``torch.fx``'s symbolic tracing, each node also run on
the example inputs (its value kept as ``node.meta["val"]``), so that what is no tensor (a
size, a dimension count, a dtype, a flag) is the example's value, not a proxy. Shapes are
thus specialised to the example's, as PyTorch's export does without ``dynamic_shapes``, and
a forward may index, slice, loop or branch on them (``x.shape[1]``, ``buf[:, :n]``,
``len(x)``, ``for t in x.unbind()``), which plain symbolic tracing cannot follow. Control
flow on a tensor's values still raises fx's ``TraceError``, as PyTorch's export refuses it.
"""

from __future__ import annotations

import builtins
import contextlib
import operator
from typing import Any, Iterator

from .._tensor import Tensor
from ..utils import _pytree
from ._symbolic_trace import Tracer
from .graph import Graph
from .node import Node, map_aggregate
from .proxy import Attribute, Proxy


def _has_tensor(value: Any) -> bool:
    return any(isinstance(leaf, Tensor) for leaf in _pytree.tree_leaves(value))


_CALLABLE = builtins.callable


def _callable(obj: Any) -> bool:
    if isinstance(obj, _ValueProxy):
        return _CALLABLE(obj.node.meta["val"])
    return _CALLABLE(obj)


class _ValueProxy(Proxy):
    """A proxy that knows its value on the example inputs: attributes that are no tensor
    (``shape``, ``ndim``, ``dtype``...), ``len``, ``callable`` and ``isinstance`` answer with
    it, and iteration walks the value's length."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        """The value's class for a tensor (``isinstance(x, torch.Tensor)`` holds, as for
        PyTorch's fake tensors while it exports): libraries pick their tensor code by it."""
        value = self.node.meta.get("val")
        return type(value) if isinstance(value, Tensor) else type(self)

    def __getattr__(self, k: str) -> Any:
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        value = getattr(self.node.meta["val"], k)
        if callable(value) and not isinstance(value, Tensor):
            return Attribute(self, k)  # a method: its call is recorded (and its result judged)
        if _has_tensor(value) or (k == "shape" and self.tracer.symbolic_sizes):
            return self.tracer.create_proxy("call_function", getattr, (self, k), {})
        return value

    def __len__(self) -> int:
        value = self.node.meta["val"]
        if isinstance(value, Tensor) and self.tracer.symbolic_sizes:
            return Proxy.__len__(self)  # a size that may change: fx's refusal
        return len(value)

    def __iter__(self) -> Iterator:
        return (self[i] for i in range(len(self.node.meta["val"])))


class _Rebuild:
    """A graph's call making a registered pytree container (a library's output dataclass)
    again from its leaves, so that the graph returns what the module returns."""

    __name__ = "tree_unflatten"

    def __init__(self, spec: _pytree.TreeSpec) -> None:
        self.spec = spec

    def __call__(self, *leaves: Any) -> Any:
        return _pytree.tree_unflatten(leaves, self.spec)


def _is_size(node: Node) -> bool:
    """Whether ``node`` reads a size (``x.shape``, ``x.size()``, ``x.numel()``) or computes
    from one."""
    if node.op == "call_method" and node.target in ("size", "numel"):
        return True
    if node.op == "call_function" and node.target is getattr and node.args[1] == "shape":
        return True
    return any(n.meta.get("size") for n in node._input_nodes)


#: containers fx's own arguments keep as they are
_FX_CONTAINERS = (tuple, list, dict, slice, range)


class ExampleTracer(Tracer):
    """:class:`~disttorch.fx.Tracer` running each recorded call on the example values:
    ``examples`` maps each placeholder's name to its value. With ``symbolic_sizes`` (a
    ``dynamic_shapes`` spec naming a dimension), sizes and what is computed from them are
    recorded rather than fixed, so that the graph follows other sizes; branching on one then
    raises ``TraceError``, as plain fx tracing does."""

    def __init__(self, examples: dict[str, Any], symbolic_sizes: bool = False) -> None:
        super().__init__()
        self.examples = examples
        self.symbolic_sizes = symbolic_sizes
        self.patcher = None

    def trace(self, root: Any, concrete_args: dict[str, Any] | None = None) -> Any:
        """As :meth:`Tracer.trace`, with ``callable()`` answering for a proxy's value (a
        tensor is not callable: ``arg() if callable(arg) else arg`` keeps the tensor)."""
        builtins.callable = _callable
        try:
            return super().trace(root, concrete_args)
        finally:
            builtins.callable = _CALLABLE

    def proxy(self, node: Node) -> Proxy:
        return _ValueProxy(node, self)

    def create_proxy(self, kind: str, target: Any, args: tuple, kwargs: dict, *rest: Any, **more: Any) -> Any:
        proxy = super().create_proxy(kind, target, args, kwargs, *rest, **more)
        node = proxy.node
        # run with the trace's patches undone: the module's own __call__, the real math functions
        # (there are none yet while the inputs are made)
        with self.patcher.suspended() if self.patcher is not None else contextlib.nullcontext():
            value = self._run(node)
        if kind == "placeholder":  # an input that holds no tensor (a flag) is a constant, as in PyTorch
            node.meta["val"] = value
            return proxy if _has_tensor(value) else value
        if self.symbolic_sizes and _is_size(node):
            node.meta["size"] = True  # recorded, so that the graph follows other sizes
        elif not _has_tensor(value):
            self.graph.erase_node(node)  # a size, a flag, a dtype: the example's, a constant
            return value
        node.meta["val"] = value
        return proxy

    def create_arg(self, a: Any) -> Any:
        """As :meth:`Tracer.create_arg`, and: a registered pytree container of another type
        (``ModelOutput``...) is made again in the graph from its leaves."""
        kind = type(a)
        if kind is _ValueProxy:  # (before the tensor check it passes: see __class__)
            return a.node
        if kind in _pytree.SUPPORTED_NODES and kind not in _FX_CONTAINERS and not hasattr(a, "_fields"):
            leaves, spec = _pytree.tree_flatten(a)
            return self.create_node(
                "call_function", _Rebuild(spec), tuple(self.create_arg(x) for x in leaves), {}
            )
        return super().create_arg(a)

    def output_value(self, graph: Graph) -> Any:
        """What the traced forward returned on the examples, from the values recorded while
        tracing (the forward is not run again: its side effects, a ``print``, happen once)."""
        (output,) = (n for n in graph.nodes if n.op == "output")
        return map_aggregate(output.args[0], self._value)

    def _value(self, a: Any) -> Any:
        """``a``'s value on the examples where ``a`` is a node; ``a`` itself otherwise."""
        if not isinstance(a, Node):
            return a
        if "val" not in a.meta:  # made without a proxy (a buffer's get_attr, a container rebuilt)
            a.meta["val"] = self._run(a)
        return a.meta["val"]

    def _run(self, node: Node) -> Any:
        """``node``'s value on the examples (its inputs' values are already known)."""
        if node.op == "placeholder":
            return self.examples[node.target.lstrip("*")]
        if node.op == "get_attr":
            return operator.attrgetter(node.target)(self.root)

        args, kwargs = map_aggregate(node.args, self._value), map_aggregate(node.kwargs, self._value)
        if node.op == "call_module":
            return self.root.get_submodule(node.target)(*args, **kwargs)
        if node.op == "call_method":
            return getattr(args[0], node.target)(*args[1:], **kwargs)
        return node.target(*args, **kwargs)
