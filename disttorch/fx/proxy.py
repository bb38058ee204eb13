"""``torch.fx.proxy``: ``Proxy``, the stand-in for a value while a program is traced (every
operation on it records a node), ``Attribute`` (``proxy.name``, a method call or an attribute
read), ``TracerBase`` (what records nodes) and ``GraphAppendingTracer`` (records into a given
graph), and ``TraceError``."""

from __future__ import annotations

import dis
import inspect
import operator
from collections.abc import Callable, Iterator
from typing import Any

from .graph import Graph
from .node import Argument, Node, Target, map_aggregate

__all__ = ["Attribute", "GraphAppendingTracer", "Proxy", "TraceError", "TracerBase"]


class TraceError(ValueError):
    """A program cannot be traced (a traced value decides control flow, or is iterated)."""


def _base_types() -> tuple[type, ...]:
    import disttorch

    return (
        str,
        int,
        float,
        bool,
        complex,
        type(None),
        type(Ellipsis),
        disttorch.dtype,
        disttorch.device,
        disttorch.memory_format,
        disttorch.layout,
    )


class TracerBase:
    """Records operations on proxies as nodes of ``self.graph``."""

    graph: Graph
    #: whether every node's ``meta`` gets ``stack_trace`` (not recorded here)
    record_stack_traces: bool = False

    def create_node(
        self,
        kind: str,
        target: Target,
        args: tuple,
        kwargs: dict,
        name: str | None = None,
        type_expr: Any = None,
    ) -> Node:
        """Insert a node into ``self.graph`` (override to tag or redirect nodes)."""
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node: Node) -> Proxy:
        """The proxy that stands for ``node``."""
        return Proxy(node, self)

    def create_proxy(
        self,
        kind: str,
        target: Target,
        args: tuple,
        kwargs: dict,
        name: str | None = None,
        type_expr: Any = None,
        proxy_factory_fn: Callable[[Node], Proxy] | None = None,
    ) -> Proxy:
        """Record ``target(*args, **kwargs)`` (arguments made nodes or constants by
        :meth:`create_arg`) and return the proxy of its result."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple) or not isinstance(kwargs_, dict):
            raise AssertionError("create_proxy: args must be a tuple and kwargs a dict")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a: Any) -> Argument:
        """``a`` as a node argument: proxies become their nodes, containers are walked,
        constants stay; anything else raises ``NotImplementedError``."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Node):
            return a
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            return type(a)(*(self.create_arg(e) for e in a))
        if isinstance(a, (tuple, list)):
            return (
                type(a)(self.create_arg(e) for e in a)
                if type(a) in (tuple, list)
                else tuple(self.create_arg(e) for e in a)
            )
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                if isinstance(self.create_arg(k), Node):
                    raise RuntimeError(
                        f"Keys for dictionaries used as an argument cannot contain a Node. Got key: {k}"
                    )
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, _base_types()):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: Proxy) -> bool:
        """Called when a proxy decides control flow (``if x:``): raises ``TraceError``."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj: Proxy) -> Iterator:
        """Called when a proxy is iterated: raises ``TraceError``."""
        raise TraceError(
            "Proxy object cannot be iterated. This can be attempted when the Proxy is used in a "
            "loop or as a *args or **kwargs function argument. See the torch.fx docs on "
            "pytorch.org for a more detailed explanation of what types of control flow can be "
            "traced, and check out the Proxy docstring for help troubleshooting Proxy iteration "
            "errors"
        )

    def keys(self, obj: Proxy) -> Any:
        """Called for ``**proxy``: records ``proxy.keys()``."""
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """A tracer that appends to an existing ``graph`` (for proxies made by hand)."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self.scope = None
        self.module_stack: dict = {}
        self.tensor_attrs: dict = {}


class Proxy:
    """Stands for the value of ``node`` while tracing: operators, method calls, attribute
    reads and torch functions applied to it record new nodes and return their proxies."""

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        self.tracer = GraphAppendingTracer(node.graph) if tracer is None else tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        if k.startswith("__") and k.endswith("__"):  # protocols (copy, numpy) must not record
            raise AttributeError(k)
        return Attribute(self, k)

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def __iter__(self) -> Iterator:
        frame = inspect.currentframe()
        caller = frame.f_back if frame is not None else None
        if caller is not None:
            for inst in dis.get_instructions(caller.f_code):
                if inst.offset == caller.f_lasti and inst.opname == "UNPACK_SEQUENCE":
                    return (self[i] for i in range(inst.argval))  # ``a, b = proxy``
        return self.tracer.iter(self)

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def __len__(self) -> int:
        raise RuntimeError(
            "'len' is not supported in symbolic tracing by default. If you want this call to be "
            "recorded, please call torch.fx.wrap('len') at module scope"
        )

    def keys(self) -> Any:
        """``proxy.keys()``, recorded (what ``**proxy`` calls)."""
        return self.tracer.keys(self)

    @classmethod
    def __torch_function__(
        cls, orig_method: Callable, types: tuple, args: tuple = (), kwargs: dict | None = None
    ) -> Proxy:
        """A torch function called on proxies (``torch.relu(p)``, ``F.linear(p, w)``) records
        a ``call_function`` node (a ``call_method`` node for a ``Tensor`` method)."""
        kwargs = kwargs or {}
        tracers: list[TracerBase] = []

        def find(a: Any) -> Any:
            if isinstance(a, Proxy) and a.tracer not in tracers:
                tracers.append(a.tracer)
            return a

        map_aggregate(args, find)
        map_aggregate(kwargs, find)
        if len(tracers) > 1:
            raise RuntimeError(
                f"Found multiple different tracers {tracers} while trying to trace operations {orig_method}"
            )
        tracer = tracers[0]
        import disttorch

        if getattr(disttorch.Tensor, getattr(orig_method, "__name__", ""), None) is orig_method:
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs)


class Attribute(Proxy):
    """``proxy.name``: called, it records ``call_method``; used as a value, it records
    ``getattr(proxy, name)`` (once, on first use)."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)


_BINARY = (
    "add",
    "sub",
    "mul",
    "floordiv",
    "truediv",
    "mod",
    "pow",
    "lshift",
    "rshift",
    "and_",
    "or_",
    "xor",
    "matmul",
)
_COMPARE = ("eq", "ne", "lt", "gt", "le", "ge", "getitem")
_UNARY = ("pos", "neg", "invert")


def _install_operators() -> None:
    """Give ``Proxy`` every Python operator, each recording ``operator.<name>``."""

    def forward(fn: Callable) -> Callable:
        def method(self: Proxy, *rest: Any) -> Proxy:
            return self.tracer.create_proxy("call_function", fn, (self, *rest), {})

        return method

    def reflected(fn: Callable) -> Callable:
        def method(self: Proxy, other: Any) -> Proxy:
            return self.tracer.create_proxy("call_function", fn, (other, self), {})

        return method

    for name in (*_BINARY, *_COMPARE, *_UNARY):
        dunder = f"__{name.strip('_')}__"
        setattr(Proxy, dunder, forward(getattr(operator, name)))
    for name in _BINARY:
        setattr(Proxy, f"__r{name.strip('_')}__", reflected(getattr(operator, name)))
    Proxy.__hash__ = object.__hash__  # __eq__ records a node; proxies still key dicts by identity


_install_operators()
