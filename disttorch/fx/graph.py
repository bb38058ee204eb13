"""``torch.fx.Graph``: a program as a doubly linked list of :class:`Node` s, with the calls
that build it (``placeholder``, ``call_function``, ..., ``output``), edit it
(``inserting_before``/``inserting_after``, ``erase_node``, ``node_copy``,
``eliminate_dead_code``), check it (``lint``) and print it (``__str__``, ``print_tabular``,
``python_code``)."""

from __future__ import annotations

import copy
import inspect
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ._codegen import PythonCode, python_code
from ._namespace import Namespace, target_to_name
from .node import Argument, Node, Target, map_arg

if TYPE_CHECKING:
    from .graph_module import GraphModule

__all__ = ["Graph", "PythonCode"]


class _node_list:  # PyTorch's name for the view (type(graph.nodes))
    """The nodes of a graph, in order; iterating survives erasing the current node."""

    def __init__(self, graph: Graph, reverse: bool = False) -> None:
        self._graph = graph
        self._reverse = reverse

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self._graph._root
        step = "_prev" if self._reverse else "_next"
        cur = getattr(root, step)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, step)

    def __reversed__(self) -> _node_list:
        return _node_list(self._graph, not self._reverse)


class _InsertPoint:
    """Moves a graph's insertion point when made; a ``with`` block's end moves it back."""

    def __init__(self, graph: Graph, insert: Callable[[Node], None]) -> None:
        self.graph = graph
        self.saved, graph._insert = graph._insert, insert

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        self.graph._insert = self.saved


class Graph:
    """A program as a list of nodes (see :class:`Node`). ``owning_module`` is the
    :class:`GraphModule` that runs it, if any."""

    def __init__(
        self,
        owning_module: GraphModule | None = None,
        tracer_cls: type | None = None,
        tracer_extras: dict | None = None,
    ) -> None:
        self._root = Node(self, "", "root", "", (), {})
        self._len = 0
        self._namespace = Namespace()
        self._insert: Callable[[Node], None] = self._root.prepend
        self.owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras

    @property
    def nodes(self) -> _node_list:
        """The nodes in program order (``reversed(graph.nodes)`` walks backwards)."""
        return _node_list(self)

    def find_nodes(self, *, op: str, target: Target | None = None, sort: bool = True) -> list[Node]:
        """The nodes of kind ``op`` (and ``target``, required for ``call_function``), in order."""
        if op == "call_function" and target is None:
            raise AssertionError("target must not be None for call_function op")
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # ------------------------------------------------------------------ where nodes go
    def inserting_before(self, n: Node | None = None) -> Any:
        """Nodes created from now on go just before ``n`` (the start if ``None``); used as a
        context manager, only until its block ends (as PyTorch's, the call itself moves the
        insertion point: libraries call it without ``with``)."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None) -> Any:
        """Nodes created from now on go just after ``n`` (the end if ``None``); see
        :meth:`inserting_before`."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert after is not in graph.")
        return _InsertPoint(self, n.append)

    # ------------------------------------------------------------------ building
    def create_node(
        self,
        op: str,
        target: Target,
        args: tuple | None = None,
        kwargs: dict | None = None,
        name: str | None = None,
        type_expr: Any = None,
    ) -> Node:
        """Create a node and insert it at the current insertion point."""
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise AssertionError("args must be a tuple")
        if not isinstance(kwargs, dict):
            raise AssertionError("kwargs must be a dict")
        candidate = name if name is not None else target_to_name(target)
        node = Node(self, self._namespace.create_name(candidate, None), op, target, args, kwargs, type_expr)
        self._insert(node)
        self._len += 1
        return node

    def placeholder(
        self, name: str, type_expr: Any = None, default_value: Any = inspect.Signature.empty
    ) -> Node:
        """An input of the program, called ``name`` (with ``default_value`` if given)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        """Read the attribute at dotted path ``qualified_name`` of the owning module."""
        self._warn_if_missing(qualified_name, "get_attr")
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(
        self, module_name: str, args: tuple | None = None, kwargs: dict | None = None, type_expr: Any = None
    ) -> Node:
        """Call the submodule at dotted path ``module_name``."""
        self._warn_if_missing(module_name, "call_module")
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(
        self, method_name: str, args: tuple | None = None, kwargs: dict | None = None, type_expr: Any = None
    ) -> Node:
        """Call method ``method_name`` of ``args[0]``."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(
        self,
        the_function: Callable[..., Any],
        args: tuple | None = None,
        kwargs: dict | None = None,
        type_expr: Any = None,
    ) -> Node:
        """Call ``the_function``."""
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result: Argument, type_expr: Any = None) -> Node:
        """Return ``result`` from the program."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def _warn_if_missing(self, qualified_name: str, op: str) -> None:
        module = self.owning_module
        if module is None:
            return
        try:
            module.get_submodule(qualified_name) if op == "call_module" else _fetch(module, qualified_name)
        except AttributeError:
            what = (
                "a call_module Node with no underlying reference"
                if op == "call_module"
                else "a get_attr Node with no underlying reference"
            )
            warnings.warn(
                f"Attempted to insert {what} in the owning GraphModule! Call GraphModule.add_submodule to add the necessary submodule, GraphModule.add_parameter to add the necessary Parameter, or nn.Module.register_buffer to add the necessary buffer",
                stacklevel=3,
            )

    def node_copy(self, node: Node, arg_transform: Callable[[Node], Argument] = lambda x: x) -> Node:
        """Copy ``node`` (from any graph) into this one; ``arg_transform`` maps its input nodes."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g: Graph, val_map: dict[Node, Node], return_output_node: bool = False) -> Any:
        """Copy every node of ``g`` but its output into this graph (``val_map`` maps old to
        new); returns what ``g`` outputs, mapped."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo: dict | None = None) -> Graph:
        g = Graph(tracer_cls=self._tracer_cls)
        out = g.graph_copy(self, {}, return_output_node=True)
        if out is not None:
            rv, old_out = out
            g.output(rv, type_expr=old_out.type)
        return g

    def __getstate__(self) -> dict:
        # the owning module pickles the graph, not the other way round; tracer classes may be local
        return {
            k: v for k, v in self.__dict__.items() if k not in ("owning_module", "_insert", "_tracer_cls")
        }

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.owning_module = None
        self._tracer_cls = None
        self._insert = self._root.prepend

    # ------------------------------------------------------------------ editing
    def erase_node(self, to_erase: Node) -> None:
        """Remove ``to_erase``, which must have no users left."""
        if len(to_erase.users) > 0:
            raise RuntimeError(
                f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} users in the graph: {to_erase.users}!"
            )
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            warnings.warn(f"erase_node({to_erase}) on an already erased node", stacklevel=2)
            return
        p, n = to_erase._prev, to_erase._next  # the node keeps its links: iteration goes on past it
        p._next, n._prev = n, p
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None) -> bool:
        """Erase, from the end, every pure node nobody uses; returns whether any was erased."""
        self.lint()
        impure = is_impure_node or (lambda node: node.is_impure())
        changed = False
        for node in reversed(self.nodes):
            if not impure(node) and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def lint(self) -> None:
        """Check the graph is well formed: nodes belong to it, inputs come before their users,
        names are unique, and (with an owning module) targets exist."""
        seen: set[Node] = set()
        names: set[str] = set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(
                        f"Argument '{arg}' of Node '{node}' does not belong to this Graph, but was used as an argument! If you are copying nodes from another graph, make sure to use ``arg_transform`` on node_copy() to remap values\n{self}"
                    )
                if arg not in seen:
                    raise RuntimeError(
                        f"Argument '{arg}' of Node '{node}' was used before it has been defined! Please check that Nodes in the graph are topologically ordered\n{self}"
                    )
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen.add(node)
            names.add(node.name)
            self._lint_target(node)

    def _lint_target(self, node: Node) -> None:
        module = self.owning_module
        if module is None or node.op not in ("get_attr", "call_module"):
            return
        try:
            found = _fetch(module, node.target)
        except AttributeError:
            raise RuntimeError(
                f"Node {node} target {node.target} references nonexistent attribute {node.target.rsplit('.', 1)[-1]} of {node.target.rpartition('.')[0] or 'root'}"
            ) from None
        if node.op == "call_module" and not hasattr(found, "forward"):
            raise RuntimeError(
                f"Node {node} target {node.target} {node.target} does not reference an nn.Module"
            )

    # ------------------------------------------------------------------ printing
    def python_code(self, root_module: str, *, verbose: bool = False) -> PythonCode:
        """The Python source of ``forward`` for this graph, and the globals it needs."""
        return python_code(self, root_module, verbose=verbose)

    def print_tabular(self) -> None:
        """Print the nodes as a table (needs the ``tabulate`` package, as in PyTorch)."""
        try:
            from tabulate import tabulate
        except ImportError:
            print(
                "`print_tabular` relies on the library `tabulate`, which could not be found on "
                "this machine. Run `pip install tabulate` to install the library."
            )
            raise
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(rows, headers=["opcode", "name", "target", "args", "kwargs"]))

    def __str__(self) -> str:
        lines = [node.format_node() for node in self.nodes]
        return "graph():" + "".join(f"\n    {line}" for line in lines if line)


def _fetch(module: Any, qualified_name: str) -> Any:
    """The attribute of ``module`` at dotted path ``qualified_name`` (``AttributeError`` if absent)."""
    obj = module
    for atom in qualified_name.split("."):
        obj = getattr(obj, atom)
    return obj
