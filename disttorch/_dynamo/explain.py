"""``torch._dynamo.explain``: what compiling a function would capture, as far as an eager
run can tell truthfully. The function runs once as a compiled call (``is_compiling()`` True);
a torch function mode sees the tensor operations it calls, and each explicit
``torch._dynamo.graph_break()`` ends a stretch of them. Every stretch in which an operation
ran is a graph, as in PyTorch's result: an ``fx.GraphModule`` whose placeholders are the
tensors it took from outside (named as PyTorch names them: ``L_x_`` for argument ``x``, a
local at a break, ``L_fn_modules_0_parameters_weight_`` for an explained module's
parameter), whose nodes are the operations (a tensor method a ``call_method``; each tensor
of a tuple result taken out by a ``getitem`` right after it, and those never used dropped),
named as PyTorch names them after the local variable of the function (or of a function it
calls, not disttorch's own) that first holds the result (``y``; ``y_1`` for the next
``y``), and whose output is what later stretches and the result use. ``ops_per_graph`` lists the graphs'
``call_function`` targets. Only what the function called directly is seen (not Python the
compiler would trace into non-tensor values), ``out_guards`` is empty, and only explicit
graph breaks are seen (PyTorch's other breaks, on unsupported Python, are not)."""

from __future__ import annotations

import inspect
import operator
import sys
import threading
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .._compile import _compiled_region
from .._tensor import Tensor
from ..fx import Graph, GraphModule, Node
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ..overrides import TorchFunctionMode
from ..utils._pytree import tree_flatten, tree_map

__all__ = ["ExplainOutput", "GraphCompileReason", "explain"]

_COMPILE_TIMES = "TorchDynamo compilation metrics:\nFunction, Runtimes (s)\n"


@dataclass
class GraphCompileReason:
    """Why a graph ended: ``reason``, where (``user_stack``), and whether it was a break."""

    reason: str
    user_stack: list[traceback.FrameSummary]
    graph_break: bool = True


@dataclass
class ExplainOutput:
    """The result of ``explain(fn)(*args)``, with PyTorch's fields and printout."""

    graphs: list = field(default_factory=list)
    graph_count: int = 0
    graph_break_count: int = -1
    break_reasons: list[GraphCompileReason] = field(default_factory=list)
    op_count: int = 0
    ops_per_graph: list[list[Any]] | None = None
    out_guards: list | None = None
    compile_times: str | None = None

    def __str__(self) -> str:
        lines = [
            f"Graph Count: {self.graph_count}",
            f"Graph Break Count: {self.graph_break_count}",
            f"Op Count: {self.op_count}",
            "Break Reasons:",
        ]
        for i, reason in enumerate(self.break_reasons):
            lines += [f"  Break Reason {i + 1}:", f"    Reason: {reason.reason}", "    User Stack:"]
            lines += [f"      {frame}" for frame in reason.user_stack]
        if self.ops_per_graph is not None:
            lines.append("Ops per Graph:")
            for i, ops in enumerate(self.ops_per_graph):
                lines += [f"  Ops {i + 1}:", *(f"    {op}" for op in ops)]
        if self.out_guards is not None:
            lines.append("Out Guards:")
        out = "\n".join(lines) + "\n"
        return out + (f"Compile Times: {self.compile_times}\n" if self.compile_times is not None else "")


class _Stretch:
    """One graph being recorded: its nodes, the tensors it made (id -> node) and those it
    took from outside."""

    def __init__(self) -> None:
        self.graph = Graph()
        self.made: dict[int, tuple[Node, Tensor]] = {}
        self.taken: dict[int, tuple[Node, Tensor]] = {}
        self.last_placeholder: Node | None = None

    def node(self, value: Any, names: dict[int, str]) -> Any:
        """The node standing for ``value`` here (a placeholder when it comes from outside)."""
        if not isinstance(value, Tensor):
            return value
        made = self.made.get(id(value))
        if made is not None:
            return made[0]
        if id(value) not in self.taken:
            name = names.get(id(value)) or f"L_tensor_{len(self.taken)}_"
            with self.graph.inserting_after(self.last_placeholder):  # (placeholders lead, as in PyTorch's)
                self.last_placeholder = self.graph.placeholder(name)
            self.taken[id(value)] = (self.last_placeholder, value)
        return self.taken[id(value)][0]


class _Recorder(TorchFunctionMode):
    """Records the operations called as graphs, one per stretch ended by a graph break."""

    def __init__(self, names: dict[int, str]) -> None:
        super().__init__()
        self.stretches = [_Stretch()]
        self.reasons: list[GraphCompileReason | None] = []
        self.names = names  # id(tensor) -> placeholder name, for tensors from outside
        self.named: set[int] = set()  # id(node) of the nodes named after a local
        self.outer: Any = None  # the frame that runs the explained function (where naming stops)
        self.frames: dict[int, Any] = {}  # the user frames an operation was called under

    def name_after_locals(self, frame: Any) -> None:
        """Name the unnamed nodes whose tensors the user frames from ``frame`` out hold in
        local variables after the first such variable, as PyTorch's compiler names them."""
        while frame is not None and frame is not self.outer:
            if not frame.f_globals.get("__name__", "").startswith("disttorch."):
                self.frames[id(frame)] = frame
                self._name_locals(frame)
            frame = frame.f_back

    def _name_locals(self, frame: Any) -> None:
        for local, value in frame.f_locals.items():
            if isinstance(value, Tensor):
                self._name(id(value), local)

    def _name(self, key: int, local: str) -> None:
        for stretch in self.stretches:
            made = stretch.made.get(key)
            if made is not None and id(made[0]) not in self.named:
                self.named.add(id(made[0]))
                made[0].name = stretch.graph._namespace.create_name(local)

    def profile(self, frame: Any, event: str, arg: Any) -> None:
        """``sys.setprofile``'s hook: the locals of a user function that called operations
        name nodes as it returns."""
        if event == "return" and self.frames.get(id(frame)) is frame:
            del self.frames[id(frame)]
            self._name_locals(frame)

    def __torch_function__(
        self, func: Callable, types: Any, args: tuple = (), kwargs: dict | None = None
    ) -> Any:
        kwargs = kwargs or {}
        self.name_after_locals(sys._getframe(1))  # (what the calls before this one made)
        out = func(*args, **kwargs)
        here = self.stretches[-1]
        for value in tree_flatten((args, kwargs))[0]:  # (attributes load before the call's arguments)
            if isinstance(value, Parameter):
                here.node(value, self.names)
        node_args, node_kwargs = tree_map(lambda v: here.node(v, self.names), (args, kwargs))
        name = getattr(func, "__name__", "")
        if getattr(Tensor, name, None) is func and not name.startswith("__"):
            node = here.graph.call_method(name, node_args, node_kwargs)
        else:
            node = here.graph.call_function(_graph_target(func), node_args, node_kwargs)
        if isinstance(out, Tensor):
            here.made[id(out)] = (node, out)
        elif isinstance(out, (tuple, list)):
            for i, item in enumerate(out):
                if isinstance(item, Tensor):
                    here.made[id(item)] = (here.graph.call_function(operator.getitem, (node, i)), item)
        return out

    def graph_break(self, msg: str) -> None:
        call = f"args `[{msg!r}]`, kwargs `{{}}`" if msg else "args `[]`, kwargs `{}`"
        reason = (
            "Call to `torch._dynamo.graph_break()`\n"
            f"  Explanation: User-inserted graph break. Message: {msg or None}\n"
            "  Hint: Remove the `torch._dynamo.graph_break()` call.\n\n"
            f"  Developer debug context: Called `torch._dynamo.graph_break()` with {call}\n\n"
            " For more details about this graph break, please visit: "
            "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0025.html"
        )
        stack = traceback.extract_stack()[:-3]  # (up to the caller of ``graph_break``)
        self.reasons.append(GraphCompileReason(reason, [stack[-1]] if stack else []))
        caller = sys._getframe(3)  # (``graph_break``'s caller: its locals name the next graph's inputs)
        self.names.update(_local_names(caller.f_locals))
        self.stretches.append(_Stretch())

    def finish(self, result: Any) -> list[tuple[GraphModule, GraphCompileReason | None]]:
        """The graphs that ran an operation, each with the reason it ended and its output:
        what it made that later graphs or ``result`` use."""
        used = {id(t) for t in tree_flatten(result)[0] if isinstance(t, Tensor)}
        for stretch in self.stretches:
            used.update(stretch.taken)
        done = []
        for stretch, reason in zip(self.stretches, [*self.reasons, None]):
            if not any(node.op.startswith("call_") for node in stretch.graph.nodes):
                continue
            outputs = [
                stretch.node(t, self.names) for key, (_, t) in list(stretch.made.items()) if key in used
            ]
            stretch.graph.output(tuple(outputs))
            for node in list(stretch.graph.nodes):  # (the items of a result never taken)
                if node.target is operator.getitem and not node.users:
                    stretch.graph.erase_node(node)
            done.append((GraphModule(Module(), stretch.graph), reason))
        return done


def _local_names(scope: dict[str, Any], prefix: str = "L_") -> dict[int, str]:
    """``id(tensor) -> name`` for the tensors among ``scope``'s values, as PyTorch names
    a graph's inputs (``L_x_``)."""
    return {id(v): f"{prefix}{k}_" for k, v in scope.items() if isinstance(v, Tensor)}


def _input_names(f: Callable, args: tuple, kwargs: dict) -> dict[int, str]:
    """The names PyTorch's graphs give ``f``'s inputs: an explained module's parameters and
    buffers (``L_fn_modules_0_parameters_weight_``) and its arguments (``L_args_0_``), a
    function's arguments by their names (``L_x_``)."""
    if isinstance(f, Module):
        names = {}
        for kind, pairs in (("parameters", f.named_parameters()), ("buffers", f.named_buffers())):
            for path, t in pairs:
                *mods, leaf = path.split(".")
                names[id(t)] = "L_fn_" + "".join(f"modules_{m}_" for m in mods) + f"{kind}_{leaf}_"
        positional = {id(a): f"L_args_{i}_" for i, a in enumerate(args) if isinstance(a, Tensor)}
        return {**names, **positional, **_local_names(kwargs, "L_kwargs_")}
    try:
        bound = inspect.signature(f).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return {}
    return _local_names(bound.arguments)


def _graph_target(func: Callable) -> Any:
    """What PyTorch's graph calls for ``func``: an operator's function from ``operator``
    (``Tensor.__radd__``: ``operator.add``), else ``func``."""
    name = getattr(func, "__name__", "")
    if not (name.startswith("__") and name.endswith("__")):
        return func
    bare = name[2:-2]
    for candidate in (bare, bare + "_", bare[1:], bare[1:] + "_"):  # (``and_``; ``__rsub__``: ``sub``)
        target = getattr(operator, candidate, None)
        if callable(target):
            return target
    return func


def _both(first: Callable, second: Callable) -> Callable:
    """A profile hook calling ``first`` then ``second``."""

    def hook(frame: Any, event: str, arg: Any) -> None:
        first(frame, event, arg)
        second(frame, event, arg)

    return hook


class _Active(threading.local):
    recorder: _Recorder | None = None


_active = _Active()


def note_graph_break(msg: str) -> None:
    """Record an explicit graph break in the ``explain`` run under way on this thread."""
    if _active.recorder is not None:
        _active.recorder.graph_break(msg)


def explain(f: Callable, *extra_args: Any, **extra_kwargs: Any) -> Any:
    """``explain(f)(*args, **kwargs)``: run ``f`` once as a compiled call and return an
    :class:`ExplainOutput` (the old form ``explain(f, *args)`` warns and runs at once)."""

    def inner(*args: Any, **kwargs: Any) -> ExplainOutput:
        recorder, before = _Recorder(_input_names(f, args, kwargs)), _active.recorder
        _active.recorder, recorder.outer = recorder, sys._getframe()
        profiler = sys.getprofile()
        sys.setprofile(recorder.profile if profiler is None else _both(profiler, recorder.profile))
        try:
            with _compiled_region(), recorder:
                result = f(*args, **kwargs)
        finally:
            sys.setprofile(profiler)
            _active.recorder = before
        graphs = recorder.finish(result)
        ops_per_graph = [
            [node.target for node in gm.graph.nodes if node.op == "call_function"] for gm, _ in graphs
        ]
        return ExplainOutput(
            graphs=[gm for gm, _ in graphs],
            graph_count=len(graphs),
            graph_break_count=len(graphs) - 1,
            break_reasons=[reason for _, reason in graphs if reason is not None],
            op_count=sum(map(len, ops_per_graph)),
            ops_per_graph=ops_per_graph,
            out_guards=[],
            compile_times=_COMPILE_TIMES,
        )

    if extra_args or extra_kwargs:
        warnings.warn(
            "explain(f, *args, **kwargs) is deprecated, use explain(f)(*args, **kwargs) instead.  "
            "If you don't migrate, we may break your explain call in the future if your user "
            "defined kwargs conflict with future kwargs added to explain(f).",
            FutureWarning,
            stacklevel=2,
        )
        return inner(*extra_args, **extra_kwargs)
    return inner
