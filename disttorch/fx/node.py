"""``torch.fx.node``: one operation of a :class:`~disttorch.fx.Graph` (``Node``), and the
helpers that walk the nested arguments of a node (``map_arg``, ``map_aggregate``)."""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Union

from .._torch_function import _assert

if TYPE_CHECKING:
    from .graph import Graph

__all__ = ["Argument", "Node", "Target", "has_side_effect", "map_aggregate", "map_arg"]

#: what a node calls: a function for ``call_function``, a name for the other kinds
Target = Union[Callable[..., Any], str]
#: a node's argument: a node, a constant, or a tuple/list/dict/slice of arguments
Argument = Any

#: functions whose calls dead-code elimination keeps though nobody uses their result
_side_effectful_functions: set[Callable] = {operator.setitem, _assert}


def has_side_effect(fn: Callable) -> Callable:
    """Mark ``fn`` as having side effects: its nodes survive ``eliminate_dead_code``."""
    _side_effectful_functions.add(fn)
    return fn


OPCODES = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output", "root")


def map_aggregate(a: Argument, fn: Callable[[Argument], Argument]) -> Argument:
    """Apply ``fn`` to every leaf of ``a``, recursing into tuples, lists, dicts and slices."""
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(e, fn) for e in a)
        return type(a)(*mapped) if hasattr(a, "_fields") else mapped  # a namedtuple keeps its type
    if isinstance(a, list):
        return [map_aggregate(e, fn) for e in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a: Argument, fn: Callable[[Node], Argument]) -> Argument:
    """Apply ``fn`` to every :class:`Node` inside ``a`` (other leaves are kept)."""
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _qualified_name(fn: Any) -> str:
    """How generated code and ``format_node`` name a callable (``torch.relu``, ``operator.add``)."""
    if getattr(builtins, getattr(fn, "__name__", ""), None) is fn:
        return f"builtins.{fn.__name__}"
    name = getattr(fn, "__name__", None) or type(fn).__name__
    module = getattr(fn, "__module__", None) or type(fn).__module__
    if module == "_operator":
        module = "operator"
    if module == "disttorch" or module.startswith("disttorch."):
        import disttorch

        if isinstance(fn, type) and getattr(disttorch, name, None) is fn:  # torch.Tensor, torch.Size
            return f"torch.{name}"
        module = "torch" + module[len("disttorch") :]
    return f"{module}.{name}"


def _type_repr(o: Any) -> str:
    """A type annotation as ``format_node`` shows it (``torch.Tensor``, ``int``)."""
    if isinstance(o, type):
        return o.__qualname__ if o.__module__ == "builtins" else _qualified_name(o)
    return repr(o)


def _format_arg(arg: Any, max_list_len: float = float("inf")) -> str:
    """An argument as ``format_node`` shows it: nodes as ``%name``, dict keys without quotes."""
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for a in arg)
        return f"({items},)" if len(arg) == 1 else f"({items})"
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return "%" + arg.name
    return str(arg)


class Node:
    """One operation in a :class:`Graph`.

    ``op`` is one of ``placeholder`` (an input), ``get_attr`` (a parameter or attribute of the
    module), ``call_function``, ``call_method``, ``call_module`` and ``output``; ``target``
    says what is called or read; ``args``/``kwargs`` may hold other nodes, whose ``users``
    then include this one."""

    def __init__(
        self,
        graph: Graph,
        name: str,
        op: str,
        target: Target,
        args: tuple,
        kwargs: dict,
        return_type: Any = None,
    ) -> None:
        if op not in OPCODES:
            raise ValueError(f"Node op must be one of {OPCODES}, got {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(
                f"Node [graph = {graph}, name = '{name}'] target {target} has type {type(target)} but a Callable is expected"
            )
        if op in ("placeholder", "call_method", "call_module", "get_attr", "output") and not isinstance(
            target, str
        ):
            raise ValueError(
                f"Node [graph = {graph}, name = '{name}'] target {target} has type {type(target)} but a str is expected"
            )
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.type = return_type
        self.meta: dict[str, Any] = {}
        self.users: dict[Node, None] = {}
        self._input_nodes: dict[Node, None] = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._prev: Node = self
        self._next: Node = self
        self._erased = False
        self._update_args_kwargs(args, kwargs)

    @property
    def stack_trace(self) -> str | None:
        """Where in the traced program this node was made (``meta["stack_trace"]``; not
        recorded by this tracer, so ``None`` unless set)."""
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace: str | None) -> None:
        self.meta["stack_trace"] = trace

    # ------------------------------------------------------------------ the linked list
    @property
    def next(self) -> Node:
        """The node after this one in the graph (the graph's root sentinel at the end)."""
        return self._next

    @property
    def prev(self) -> Node:
        """The node before this one in the graph."""
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move (or insert) node ``x`` just before this one."""
        if self is x:
            raise AssertionError("Cannot prepend self")
        if x.graph is not self.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Move (or insert) node ``x`` just after this one."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    # ------------------------------------------------------------------ arguments and users
    @property
    def args(self) -> tuple:
        """The positional arguments (nodes, constants, and containers of them)."""
        return self._args

    @args.setter
    def args(self, a: tuple) -> None:
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict:
        """The keyword arguments."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k: dict) -> None:
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> list[Node]:
        """The distinct nodes this node reads, in the order they appear in its arguments."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg: Argument) -> None:
        """Set positional argument ``idx`` to ``arg``."""
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Argument) -> None:
        """Set keyword argument ``key`` to ``arg``."""
        self.kwargs = {**self._kwargs, key: arg}

    def _update_args_kwargs(self, new_args: tuple, new_kwargs: dict) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        self._args = map_arg(tuple(new_args), self._note_input)
        self._kwargs = map_arg(dict(new_kwargs), self._note_input)
        for node in self._input_nodes:
            node.users.setdefault(self, None)

    def _note_input(self, n: Node) -> Node:
        self._input_nodes.setdefault(n, None)
        return n

    def replace_all_uses_with(
        self,
        replace_with: Node,
        delete_user_cb: Callable[[Node], bool] = lambda user: True,
        *,
        propagate_meta: bool = False,
    ) -> list[Node]:
        """Make every user of this node read ``replace_with`` instead; returns those users.
        ``delete_user_cb`` picks which users change; ``propagate_meta`` copies ``meta`` over."""
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError(
                    "Called node.replace_all_uses_with(replace_with, propagate_meta=True), but replace_with already has .meta keys"
                )
            replace_with.meta.update(self.meta)
        changed = [user for user in list(self.users) if delete_user_cb(user)]
        for user in changed:
            user.replace_input_with(self, replace_with)
        return changed

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Read ``new_input`` wherever this node read ``old_input``."""

        def swap(n: Node) -> Node:
            return new_input if n is old_input else n

        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def is_impure(self) -> bool:
        """Whether removing this node could change what the program does: inputs, outputs,
        calls of functions marked by :func:`has_side_effect` (``torch._assert``,
        ``operator.setitem``) and of modules with ``_is_impure`` set. As in PyTorch, method
        calls count as pure (an unused ``x.add_(1)`` is dead code)."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_module":
            if self.graph.owning_module is None:
                raise AssertionError("self.graph.owning_module not set for purity check")
            return getattr(self.graph.owning_module.get_submodule(self.target), "_is_impure", False)
        return self.op == "call_function" and self.target in _side_effectful_functions

    # ------------------------------------------------------------------ printing
    def format_node(
        self, placeholder_names: list | None = None, maybe_return_typename: list | None = None
    ) -> str | None:
        """The node as one line of ``Graph.__str__`` (``%add : [num_users=1] = call_function[...]``)."""
        if self.op == "placeholder":
            if placeholder_names is not None:
                placeholder_names.append(self.target)
            default = f"(default={self.args[0]})" if self.args else ""
            typename = f"{_type_repr(self.type)} " if self.type else ""
            return f"%{self.name} : {typename}[num_users={len(self.users)}] = placeholder[target={self.target}]{default}"
        if self.op == "get_attr":
            return f"%{self.name} : [num_users={len(self.users)}] = get_attr[target={self.target}]"
        if self.op == "output":
            return f"return {self.args[0]}"
        target = _qualified_name(self.target) if self.op == "call_function" else self.target
        return (
            f"%{self.name} : [num_users={len(self.users)}] = {self.op}[target={target}]"
            f"(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})"
        )

    def __repr__(self) -> str:
        return self.name


#: callables whose calls generated code writes as Python operators (``x + y``, ``-x``, ``x[i]``)
OPERATOR_FORMATS: dict[Callable, str] = {
    operator.add: "{} + {}",
    operator.sub: "{} - {}",
    operator.mul: "{} * {}",
    operator.floordiv: "{} // {}",
    operator.truediv: "{} / {}",
    operator.mod: "{} % {}",
    operator.pow: "{} ** {}",
    operator.lshift: "{} << {}",
    operator.rshift: "{} >> {}",
    operator.and_: "{} & {}",
    operator.or_: "{} | {}",
    operator.xor: "{} ^ {}",
    operator.matmul: "{} @ {}",
    operator.getitem: "{}[{}]",
    operator.eq: "{} == {}",
    operator.ne: "{} != {}",
    operator.lt: "{} < {}",
    operator.gt: "{} > {}",
    operator.le: "{} <= {}",
    operator.ge: "{} >= {}",
    operator.pos: "+{}",
    operator.neg: "-{}",
    operator.invert: "~{}",
}

#: in-place operators: generated code writes the statement, then names its first operand
INPLACE_FORMATS: dict[Callable, str] = {
    operator.iadd: "{} += {}",
    operator.iand: "{} &= {}",
    operator.ifloordiv: "{} //= {}",
    operator.ilshift: "{} <<= {}",
    operator.imod: "{} %= {}",
    operator.imul: "{} *= {}",
    operator.imatmul: "{} @= {}",
    operator.ior: "{} |= {}",
    operator.ipow: "{} **= {}",
    operator.irshift: "{} >>= {}",
    operator.isub: "{} -= {}",
    operator.itruediv: "{} /= {}",
    operator.ixor: "{} ^= {}",
    operator.setitem: "{}[{}] = {}",
}
