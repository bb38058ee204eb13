"""Python source for a graph: one line per node, PyTorch's layout (operators written as
operators, ``self.sub.mod(x)`` for module calls, each value set to ``None`` after its last
use), and the globals that source needs to run."""

from __future__ import annotations

import builtins
import math
import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._namespace import Namespace
from .node import INPLACE_FORMATS, OPERATOR_FORMATS, Node, _qualified_name, map_arg

if TYPE_CHECKING:
    from .graph import Graph

__all__ = ["PythonCode", "python_code"]

WRAP_CALL = "torch.fx._symbolic_trace.wrap"


@dataclass
class PythonCode:
    """``src``: the source of ``forward``; ``globals``: what its names refer to."""

    src: str
    globals: dict[str, Any] = field(default_factory=dict)


def _torch() -> Any:
    import disttorch

    return disttorch


def format_target(base: str, target: str) -> str:
    """``self.a.b`` for dotted path ``a.b``; ``getattr(self.seq, "0")`` where a part is no identifier."""
    out = base
    for atom in target.split("."):
        out = f"{out}.{atom}" if atom.isidentifier() else f'getattr({out}, "{atom}")'
    return out


class _Globals:
    """The names generated code refers to, and the objects behind them."""

    def __init__(self) -> None:
        torch = _torch()
        self.values: dict[str, Any] = {
            "inf": math.inf,
            "nan": math.nan,
            "NoneType": type(None),
            "torch": torch,
            "device": torch.device,
        }
        self._names = Namespace()
        for name in self.values:
            self._names.reserve(name)

    def name_of(self, obj: Any) -> str:
        """An expression naming ``obj`` (``torch.relu``, ``len``, ``__main___my_fn``)."""
        if getattr(builtins, getattr(obj, "__name__", ""), None) is obj:
            return obj.__name__
        for name, value in self.values.items():
            if value is obj:
                return name
        qualified = _qualified_name(obj)
        if qualified.startswith("torch.") and _resolve(_torch(), qualified.split(".")[1:]) is obj:
            return qualified
        name = self._names.create_name(qualified.replace(".", "_"), obj)
        self.values[name] = obj
        return name


def _resolve(obj: Any, path: list[str]) -> Any:
    for atom in path:
        obj = getattr(obj, atom, None)
    return obj


def _repr_arg(arg: Any, names: _Globals) -> str:
    """How an argument is written in the source."""
    if isinstance(arg, Node):
        return arg.name
    if isinstance(arg, tuple) and hasattr(arg, "_fields"):
        inner = ", ".join(_repr_arg(a, names) for a in arg)
        return f"{names.name_of(type(arg))}({inner})"
    if isinstance(arg, tuple):
        inner = ", ".join(_repr_arg(a, names) for a in arg)
        return f"({inner},)" if len(arg) == 1 else f"({inner})"
    if isinstance(arg, list):
        return "[" + ", ".join(_repr_arg(a, names) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k!r}: {_repr_arg(v, names)}" for k, v in arg.items()) + "}"
    if isinstance(arg, slice):
        return f"slice({_repr_arg(arg.start, names)}, {_repr_arg(arg.stop, names)}, {_repr_arg(arg.step, names)})"
    if isinstance(arg, float) and (math.isinf(arg) or math.isnan(arg)):
        return repr(arg)  # inf, -inf, nan: bound as globals
    if isinstance(arg, type) or callable(arg) and hasattr(arg, "__name__"):
        return names.name_of(arg)
    torch = _torch()
    if isinstance(arg, torch.dtype):
        return f"torch.{str(arg).rpartition('.')[2]}"
    if isinstance(arg, torch.device):
        return f"device({str(arg)!r})"
    return repr(arg)


#: the containers ``typing`` spells with a capital (``list[int]`` is written ``typing_List[int]``)
_TYPING_ORIGINS = {
    list: typing.List,
    dict: typing.Dict,
    tuple: typing.Tuple,
    set: typing.Set,
    frozenset: typing.FrozenSet,
    type: typing.Type,
}
_ABBREVIATIONS = {"bool": "b8", "bfloat16": "bf16"}


def _type_repr(o: Any, names: _Globals) -> str:
    """An annotation in generated code: ``torch.Tensor``, ``int``, ``typing_List[int]``."""
    if o == ():
        return "()"
    origin = getattr(o, "__origin__", None)
    if origin is not None:
        args = getattr(o, "__args__", None)
        inner = f"[{','.join(_type_repr(a, names) for a in args)}]" if args else ""
        return names.name_of(_TYPING_ORIGINS.get(origin, origin)) + inner
    return names.name_of(o)


def _shape_annotation(meta: Any) -> str | None:
    """``"f32[50, 1000]"``: what ``print_readable`` shows of a node ``ShapeProp`` annotated."""
    if not (isinstance(meta, tuple) and hasattr(meta, "_fields") and "dtype" in meta._fields):
        return None
    name = str(meta.dtype).rpartition(".")[2]
    abbr = _ABBREVIATIONS.get(name) or name[0] + "".join(c for c in name if c.isdigit())
    return f'"{abbr}[{", ".join(str(d) for d in meta.shape)}]"'


def _call_args(args: tuple, kwargs: dict, names: _Globals) -> str:
    parts = [_repr_arg(a, names) for a in args]
    parts += [f"{k} = {_repr_arg(v, names)}" for k, v in kwargs.items()]
    return ", ".join(parts)


def _expression(node: Node, root: str, names: _Globals) -> str:
    """The right-hand side of ``node``'s line."""
    if node.op == "get_attr":
        return format_target(root, node.target)
    if node.op == "call_module":
        return f"{format_target(root, node.target)}({_call_args(node.args, node.kwargs, names)})"
    if node.op == "call_method":
        self_arg, *rest = node.args
        return f"{_repr_arg(self_arg, names)}.{node.target}({_call_args(tuple(rest), node.kwargs, names)})"
    target = node.target
    form = OPERATOR_FORMATS.get(target) if not node.kwargs else None
    if form is not None and form.count("{}") == len(node.args):
        return form.format(*(_repr_arg(a, names) for a in node.args))
    if (
        target is getattr
        and len(node.args) == 2
        and not node.kwargs
        and isinstance(node.args[1], str)
        and node.args[1].isidentifier()
    ):
        return f"{_repr_arg(node.args[0], names)}.{node.args[1]}"
    return f"{names.name_of(target)}({_call_args(node.args, node.kwargs, names)})"


def _last_uses(graph: Graph) -> dict[Node, list[Node]]:
    """For each node, the values whose last reader it is (they are freed after its line)."""
    seen: set[Node] = set()
    freed_by: dict[Node, list[Node]] = {}

    def register(value: Node, user: Node) -> None:
        if value not in seen:
            seen.add(value)
            freed_by.setdefault(user, []).append(value)

    for node in reversed(graph.nodes):
        map_arg(node.args, lambda n, user=node: register(n, user))
        map_arg(node.kwargs, lambda n, user=node: register(n, user))
    return freed_by


def python_code(graph: Graph, root_module: str, *, verbose: bool = False) -> PythonCode:
    """The source of ``def forward(self, ...)`` for ``graph`` (``root_module`` names the module)."""
    names = _Globals()
    freed_by = _last_uses(graph)
    params: list[str] = []
    body: list[str] = []
    wrapped: list[str] = []
    returns = ""
    for node in graph.nodes:
        annotation = f" : {_type_repr(node.type, names)}" if node.type is not None else ""
        shape = _shape_annotation(node.meta.get("tensor_meta")) if verbose else None
        if shape is not None:
            annotation = f": {shape}"
        if node.op == "placeholder":
            default = f" = {_repr_arg(node.args[0], names)}" if node.args else ""
            params.append(f"{node.target}{annotation}{default}")
            if node.name != node.target:
                body.append(f"{node.name} = {node.target.lstrip('*')}")  # *args: _args = args
            continue
        if node.op == "output":
            if node.type is not None:
                returns = f" -> {_type_repr(node.type, names)}"
            body.append(f"return {_repr_arg(node.args[0], names)}")
            continue
        inplace = INPLACE_FORMATS.get(node.target) if node.op == "call_function" and not node.kwargs else None
        if inplace is not None and inplace.count("{}") == len(node.args):  # x += 2;  iadd = x
            line = f"{inplace.format(*(_repr_arg(a, names) for a in node.args))};  {node.name} = {_repr_arg(node.args[0], names)}"
        else:
            typed = annotation if shape is not None else ""
            line = f"{node.name}{typed} = {_expression(node, root_module, names)}"
        if node.op == "call_function" and node.meta.get("is_wrapped"):
            call = f'{WRAP_CALL}("{names.name_of(node.target)}")'
            if call not in wrapped:
                wrapped.append(call)
        dead = list(freed_by.get(node, []))
        if not node.users:
            dead.append(node)
        if dead:
            line += ";  " + " = ".join([n.name for n in dead] + ["None"])
        body.append(line)
    if verbose:
        body.insert(0, "# No stacktrace found for following nodes")
    code = "\n".join(f"    {line}" for line in [*body, ""])
    src = f"\n{chr(10).join(wrapped)}\n\ndef forward({', '.join([root_module, *params])}){returns}:\n{code}"
    return PythonCode(src, names.values)
