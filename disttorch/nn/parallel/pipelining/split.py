"""``pipeline()``: cut one model into pipeline stages by tracing it (``torch.fx``).

The model's ``forward`` is traced into a graph. Cut points come from ``split_spec``
(``{"layers.2": SplitPoint.BEGINNING}``: cut before the first node of submodule
``layers.2``; ``SplitPoint.END``: after its last) and from calls of :func:`pipe_split` inside
``forward`` (a no-op when the model runs normally). The nodes between two cuts make a stage:
a ``GraphModule`` whose inputs are the values earlier stages computed (or the model's
inputs) that this stage or a later one uses, and whose outputs are those it hands on, in
graph order, so that stage ``k``'s outputs are stage ``k + 1``'s inputs. The last stage
returns the model's output. ``Pipe.split_gm`` runs the stages one after the other (the whole
model); ``pipe.build_stage(i, device)`` wraps stage ``i`` in a :class:`PipelineStage`.

Difference from PyTorch: traced with ``symbolic_trace`` (the model must be traceable by
it; ``mb_args`` is only checked), and a parameter or buffer read directly (not through
a submodule) by two stages is refused.
"""

from __future__ import annotations

import enum
import operator
import threading
from dataclasses import dataclass
from typing import Any

from ....fx import Graph, GraphModule, Tracer
from ....fx.node import Node, map_arg
from ...modules.module import Module
from .stage import PipelineStage

__all__ = ["Pipe", "PipeInfo", "SplitPoint", "build_stage", "pipe_split", "pipeline"]

_tracing = threading.local()


class SplitPoint(enum.Enum):
    """Where a ``split_spec`` entry cuts: before the submodule (``BEGINNING``) or after it (``END``)."""

    BEGINNING = 1
    END = 2


def pipe_split() -> None:
    """Mark a cut between two stages inside ``forward``; does nothing outside ``pipeline()``."""
    tracer = getattr(_tracing, "tracer", None)
    if tracer is not None:
        tracer.graph.create_node("call_function", pipe_split, (), {})


@dataclass
class PipeInfo:
    """What ``build_stage`` needs to know about a pipeline."""

    graph: Graph
    num_stages: int
    has_loss_and_backward: bool = False


class Pipe(Module):
    """A model cut into stages: ``split_gm`` holds ``submod_0`` ... ``submod_{n-1}``."""

    def __init__(self, split_gm: GraphModule, num_stages: int) -> None:
        super().__init__()
        self.split_gm = split_gm
        self.num_stages = num_stages

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.split_gm(*args, **kwargs)

    def get_stage_module(self, stage_idx: int) -> Module:
        """Stage ``stage_idx``'s module."""
        if not 0 <= stage_idx < self.num_stages:
            raise ValueError(f"Invalid stage index {stage_idx}!")
        return getattr(self.split_gm, f"submod_{stage_idx}")

    def info(self) -> PipeInfo:
        return PipeInfo(self.split_gm.graph, self.num_stages)

    def build_stage(self, stage_index: int, device: Any, group: Any = None) -> PipelineStage:
        """A :class:`PipelineStage` running stage ``stage_index`` on this rank."""
        return PipelineStage(
            self.get_stage_module(stage_index), stage_index, self.num_stages, device, group=group
        )


def build_stage(
    stage_module: Module, stage_index: int, pipe_info: PipeInfo, device: Any, group: Any = None
) -> PipelineStage:
    """A :class:`PipelineStage` for ``stage_module`` (``pipe.get_stage_module(i)``)."""
    return PipelineStage(stage_module, stage_index, pipe_info.num_stages, device, group=group)


def pipeline(
    module: Module,
    mb_args: tuple[Any, ...],
    mb_kwargs: dict[str, Any] | None = None,
    split_spec: dict[str, SplitPoint] | None = None,
    split_policy: Any = None,
) -> Pipe:
    """Cut ``module`` into stages at ``split_spec``'s submodules and its ``pipe_split()`` calls.

    Args:
        module: the model.
        mb_args: an example microbatch's positional inputs (a tuple).
        mb_kwargs: keyword inputs (must be empty: traced inputs are positional).
        split_spec: ``{submodule name: SplitPoint}``.
        split_policy: not supported (must be ``None``).
    """
    if not isinstance(mb_args, tuple):
        raise TypeError(
            f"pipeline: mb_args must be a tuple of the model's inputs, got {type(mb_args).__name__}"
        )
    if mb_kwargs or split_policy is not None:
        raise NotImplementedError("pipeline: mb_kwargs and split_policy are not supported by disttorch")
    _tracing.tracer = tracer = Tracer()
    try:
        graph = tracer.trace(module)
    finally:
        _tracing.tracer = None
    stage_of = _assign_stages(graph, split_spec or {})
    num_stages = max(stage_of.values(), default=0) + 1
    stages, widths = _stage_modules(module, graph, stage_of, num_stages)
    inputs = [n.name for n in graph.nodes if n.op == "placeholder"]
    return Pipe(_chain(stages, inputs, widths), num_stages)


def _in_submodule(node: Node, name: str) -> bool:
    return node.op in ("call_module", "get_attr") and (
        node.target == name or node.target.startswith(name + ".")
    )


def _assign_stages(graph: Graph, split_spec: dict[str, SplitPoint]) -> dict[Node, int]:
    """The stage of every computing node, in graph order; ``pipe_split`` nodes are removed."""
    body = [n for n in graph.nodes if n.op not in ("placeholder", "output")]
    cuts_before = set()
    for name, point in split_spec.items():
        inside = [i for i, n in enumerate(body) if _in_submodule(n, name)]
        if not inside:
            raise ValueError(f"pipeline: split_spec names {name!r}, which forward does not call")
        cuts_before.add(inside[0] if point == SplitPoint.BEGINNING else inside[-1] + 1)
    stage_of, stage = {}, 0
    for i, node in enumerate(body):
        if i in cuts_before and i > 0:
            stage += 1
        if node.op == "call_function" and node.target is pipe_split:
            stage += 1
            graph.erase_node(node)
            continue
        stage_of[node] = stage
    return stage_of


def _stage_modules(
    module: Module, graph: Graph, stage_of: dict[Node, int], num_stages: int
) -> tuple[list[GraphModule], list[int]]:
    """Each stage's GraphModule, and how many values each stage but the last hands on."""
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    (output,) = [n for n in graph.nodes if n.op == "output"]
    born = {**{p: 0 for p in placeholders}, **stage_of}
    last_use = {n: born[n] for n in born}
    for node, stage in stage_of.items():
        for used in node.all_input_nodes:
            last_use[used] = max(last_use[used], stage)
    for used in output.all_input_nodes:
        last_use[used] = num_stages - 1
    order = placeholders + list(stage_of)
    # boundary[k]: the values crossing from stage k to stage k + 1, in graph order
    boundary = [[n for n in order if born[n] <= k < last_use[n]] for k in range(num_stages - 1)]
    _refuse_shared_attributes(stage_of)
    modules = []
    for k in range(num_stages):
        g = Graph()
        env: dict[Node, Node] = {}
        for n in placeholders if k == 0 else boundary[k - 1]:
            env[n] = g.placeholder(n.name)
        for node in (n for n in stage_of if stage_of[n] == k):
            env[node] = g.node_copy(node, env.__getitem__)
        if k == num_stages - 1:
            g.output(map_arg(output.args[0], env.__getitem__))
        else:
            g.output(tuple(env[n] for n in boundary[k]))
        modules.append(GraphModule(module, g, class_name=f"PipeStage{k}"))
    return modules, [len(b) for b in boundary]


def _refuse_shared_attributes(stage_of: dict[Node, int]) -> None:
    seen: dict[str, int] = {}
    for node, stage in stage_of.items():
        if node.op == "get_attr" and seen.setdefault(node.target, stage) != stage:
            raise NotImplementedError(
                f"pipeline: {node.target!r} is read by stages {seen[node.target]} and {stage}; "
                "disttorch does not share a parameter between stages"
            )


def _chain(stages: list[GraphModule], inputs: list[str], widths: list[int]) -> GraphModule:
    """A GraphModule calling ``submod_0`` ... in turn (stage ``k`` hands on ``widths[k]``
    values): the whole model, cut."""
    g = Graph()
    values = [g.placeholder(name) for name in inputs]
    for k in range(len(stages)):
        out = g.call_module(f"submod_{k}", tuple(values))
        if k < len(stages) - 1:
            values = [g.call_function(operator.getitem, (out, i)) for i in range(widths[k])]
    g.output(out)
    return GraphModule({f"submod_{k}": m for k, m in enumerate(stages)}, g)
