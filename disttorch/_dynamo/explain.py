"""``torch._dynamo.explain``: what compiling a function would capture, as far as an eager
run can tell truthfully. The function runs once as a compiled call (``is_compiling()`` True);
a torch function mode sees the tensor operations it calls, and each explicit
``torch._dynamo.graph_break()`` ends a stretch of them. Every stretch in which an operation
ran counts as a graph, as in PyTorch's result; nothing is traced, so ``graphs`` and
``out_guards`` are empty, and the operations listed are those the function called directly
(PyTorch lists its graphs' function calls, not method calls: counts can differ), and only
explicit graph breaks are seen (PyTorch's other breaks, on unsupported Python, are not)."""

from __future__ import annotations

import operator
import threading
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .._compile import _compiled_region
from ..overrides import TorchFunctionMode

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


class _Recorder(TorchFunctionMode):
    """Collects the operations called, in stretches ended by graph breaks."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[list[Any]] = [[]]
        self.reasons: list[GraphCompileReason | None] = []

    def __torch_function__(
        self, func: Callable, types: Any, args: tuple = (), kwargs: dict | None = None
    ) -> Any:
        self.ops[-1].append(_graph_target(func))
        return func(*args, **(kwargs or {}))

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
        self.ops.append([])


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
        recorder, before = _Recorder(), _active.recorder
        _active.recorder = recorder
        try:
            with _compiled_region(), recorder:
                f(*args, **kwargs)
        finally:
            _active.recorder = before
        graphs = [(ops, reason) for ops, reason in zip(recorder.ops, [*recorder.reasons, None]) if ops]
        ops_per_graph = [ops for ops, _ in graphs]
        return ExplainOutput(
            graphs=[],
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
