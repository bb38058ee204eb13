"""``torch.fx.Interpreter`` runs a :class:`GraphModule` node by node (one overridable method
per op kind, so a subclass can observe or change what each does); ``Transformer`` runs it
on proxies instead, producing a new, transformed :class:`GraphModule`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..nn.modules.module import Module
from .graph import Graph, _fetch
from .graph_module import GraphModule
from .node import Argument, Node, Target, map_aggregate, map_arg
from .proxy import Proxy, TracerBase

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Run ``module.graph`` one node at a time: :meth:`run` calls :meth:`run_node` for each,
    which calls the method named after the node's op (``placeholder``, ``get_attr``,
    ``call_function``, ``call_method``, ``call_module``, ``output``)."""

    def __init__(
        self, module: Module, garbage_collect_values: bool = True, graph: Graph | None = None
    ) -> None:
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env: dict[Node, Any] = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        self.user_to_last_uses: dict[Node, list[Node]] = {}
        if garbage_collect_values:
            seen: set[Node] = set()
            for node in reversed(self.graph.nodes):
                for n in node._input_nodes:
                    if n not in seen:
                        seen.add(n)
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(
        self, *args: Any, initial_env: dict[Node, Any] | None = None, enable_io_processing: bool = True
    ) -> Any:
        """Run the graph on ``args``; ``initial_env`` presets values of some nodes."""
        self.env = initial_env if initial_env is not None else {}
        self.args_iter: Iterator[Any] = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            self.env[node] = self.run_node(node)
            if self.garbage_collect_values:
                for to_delete in self.user_to_last_uses.get(node, []):
                    del self.env[to_delete]
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list: list) -> Any:
        """:meth:`run` on the values of ``args_list``, which is emptied."""
        args = list(args_list)
        args_list.clear()
        return self.run(*args)

    def run_node(self, n: Node) -> Any:
        """Run one node: fetch its arguments' values, then call the method of its op."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # ------------------------------------------------------------------ one method per op
    def placeholder(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """The next input (or the placeholder's default when inputs ran out)."""
        if isinstance(target, str) and target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(
                f"Expected positional argument for parameter {target}, but one was not passed in!"
            ) from None

    def get_attr(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """The module's attribute at ``target``."""
        return self.fetch_attr(target)

    def call_function(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """``target(*args, **kwargs)``."""
        return target(*args, **kwargs)

    def call_method(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """``args[0].target(*args[1:], **kwargs)``."""
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """The submodule at ``target`` called on ``args``."""
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """What the graph returns."""
        return args[0]

    # ------------------------------------------------------------------ helpers
    def fetch_attr(self, target: str) -> Any:
        """The attribute of the module at dotted path ``target``."""
        try:
            return _fetch(self.module, target)
        except AttributeError:
            raise RuntimeError(f"Node referenced nonexistent target {target}") from None

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple[tuple, dict]:
        """``n``'s arguments with every node replaced by its computed value."""
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args: Argument, n: Node) -> Argument:
        """``args`` with every node replaced by its value in ``self.env``."""

        def load(n_arg: Node) -> Any:
            if n_arg not in self.env:
                raise RuntimeError(
                    f"Node {n} referenced nonexistent value {n_arg}! Run Graph.lint() to diagnose such issues"
                )
            return self.env[n_arg]

        return map_arg(args, load)


class _TransformerTracer(TracerBase):
    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self.tensor_attrs: dict = {}

    def is_leaf_module(self, m: Module, qualname: str) -> bool:
        return True


class Transformer(Interpreter):
    """Re-trace a module through the :class:`Interpreter` methods: override them to change
    what each node becomes, then :meth:`transform` returns the new :class:`GraphModule`."""

    def __init__(self, module: GraphModule) -> None:
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target: Target, args: tuple, kwargs: dict) -> Proxy:
        """A placeholder of the new graph (keeping the default value)."""
        default = args[0] if args else _EMPTY
        if default is _EMPTY:
            return Proxy(self.new_graph.placeholder(target), self.tracer)
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target: Target, args: tuple, kwargs: dict) -> Proxy:
        """A ``get_attr`` node of the new graph."""
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """A ``call_module`` node of the new graph."""
        return self.tracer.create_proxy("call_module", target, args, kwargs)

    def call_function(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """A ``call_function`` node of the new graph."""
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self) -> GraphModule:
        """Run the transformation; the result runs the new graph over the same module."""
        result = super().run(enable_io_processing=False)
        if result is not None:
            self.new_graph.output(map_aggregate(result, lambda a: a.node if isinstance(a, Proxy) else a))
        return GraphModule(self.module, self.new_graph)


_EMPTY = object()
