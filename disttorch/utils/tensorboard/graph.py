"""``add_graph``'s ``GraphDef``: the dataflow between a model's module calls.

PyTorch traces the model with TorchScript and draws every operator; disttorch has no
tracer, so it runs the model once with forward hooks on its leaf modules and draws those
calls instead: one node per leaf-module call, named by its scope (``Sequential/Linear[0]``)
with the module class as its op and its output shapes, an edge wherever a call consumes a
tensor an earlier call (or the input) produced, and IO nodes for inputs and outputs.
Tensor operations written in a ``forward`` between modules are not drawn.
"""

from __future__ import annotations

from typing import Any

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

from ..._tensor import Tensor
from ...autograd import grad_mode
from .._pytree import tree_leaves

__all__ = ["module_graph"]


def _shapes(tensors: list[Tensor]) -> AttrValue:
    shapes = [TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(n)) for n in t.shape]) for t in tensors]
    return AttrValue(list=AttrValue.ListValue(shape=shapes))


def _scopes(model: Any) -> dict[int, str]:
    """Leaf module id -> its scope name, ``Root/Class[attr]/...``."""
    names = {id(model): type(model).__name__}
    scopes = {}
    for path, module in model.named_modules():
        if path:
            parent = model.get_submodule(path.rpartition(".")[0]) if "." in path else model
            names[id(module)] = f"{names[id(parent)]}/{type(module).__name__}[{path.rpartition('.')[2]}]"
        if not any(True for _ in module.children()):
            scopes[id(module)] = names[id(module)]
    return scopes


def module_graph(model: Any, input_to_model: Any) -> GraphDef:
    """Run ``model(*inputs)`` once (no gradients) and return the graph of its module calls."""
    inputs = input_to_model if isinstance(input_to_model, (tuple, list)) else (input_to_model,)
    nodes: list[NodeDef] = []
    producer: dict[int, str] = {}
    alive: list[Tensor] = []  # keeps the tensors whose ids name producers

    def record(name: str, op: str, consumed: list[Tensor], produced: list[Tensor]) -> None:
        edges = [producer[id(t)] for t in consumed if id(t) in producer]
        nodes.append(NodeDef(name=name, op=op, input=edges, attr={"_output_shapes": _shapes(produced)}))
        for t in produced:
            producer[id(t)] = name
        alive.extend(produced)

    for i, x in enumerate(t for t in tree_leaves(list(inputs)) if isinstance(t, Tensor)):
        record(f"input/input.{i}", "IO Node", [], [x])
    scopes, calls = _scopes(model), {}

    def hook(module: Any, args: tuple, output: Any) -> None:
        scope = scopes[id(module)]
        calls[scope] = calls.get(scope, 0) + 1
        name = scope if calls[scope] == 1 else f"{scope}.{calls[scope]}"
        leaves = [t for t in tree_leaves(output) if isinstance(t, Tensor)]
        record(
            name, type(module).__name__, [t for t in tree_leaves(list(args)) if isinstance(t, Tensor)], leaves
        )

    handles = [m.register_forward_hook(hook) for m in model.modules() if id(m) in scopes]
    try:
        with grad_mode.no_grad():
            output = model(*inputs)
    finally:
        for h in handles:
            h.remove()
    for i, y in enumerate(t for t in tree_leaves(output) if isinstance(t, Tensor)):
        nodes.append(
            NodeDef(
                name=f"output/output.{i}",
                op="IO Node",
                input=[producer.get(id(y), "")],
                attr={"_output_shapes": _shapes([y])},
            )
        )
    return GraphDef(node=nodes, versions=VersionDef(producer=22))
