"""``add_graph``'s ``GraphDef``: the operators a model's forward runs, in the scopes of the
modules that run them, as PyTorch's TorchScript trace draws them.

The model runs once (no gradients) under a torch function mode that records each tensor
operation called from Python code (a module's ``forward`` or the model's own), the way
PyTorch's trace records ``aten`` operators: one node per operation, named by its module scope
(``Net/Sequential[seq]/Linear[1]/linear``, numbered from the second of a name in a scope:
``Net/mul.1``), with op ``aten::<name>``, ``attr`` ``"{}"``, its output shapes, and an edge from
each operation (or input) that made a tensor it takes. A module's parameters and buffers an
operation takes are ``prim::GetAttr`` nodes (``Net/Linear[fc1]/weight/weight``). The inputs
are ``IO Node``s named after ``forward``'s parameters (``input/x``), the outputs
``output/output.1``, ... The numbers, flags, strings and ``None`` an operation is called with
are ``prim::Constant`` nodes (``attr`` ``"{ value : 1}"``, a flag as 0 or 1, ``None`` with no
value, ``"{}"``), and a list or tuple of them or of tensors a ``prim::ListConstruct`` node
(``torch.cat``'s tensors), each an input of the operation in the order of its arguments (an
``inplace`` flag is none: ATen's in-place form is an operator of its own).
Differences from PyTorch's: node names end in the operator's name (``Net/linear``,
``Net/constant.2``), not TorchScript's value numbers, and the constants are the arguments the
Python call passes, not every argument of the ``aten`` operator's schema (defaults left out
are not drawn, nor dtypes and other objects).

``graph`` pairs the ``GraphDef`` with the run metadata PyTorch logs beside it: step statistics
with one CPU device and no timings (TensorBoard lists it as the run ``step1``).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

from ..._tensor import Tensor
from ...autograd import grad_mode
from ...overrides import TorchFunctionMode
from .._pytree import tree_leaves

__all__ = ["graph", "module_graph"]


def _shapes(tensors: list[Tensor]) -> AttrValue:
    shapes = [TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(n)) for n in t.shape]) for t in tensors]
    return AttrValue(list=AttrValue.ListValue(shape=shapes))


def _tensors(value: Any) -> list[Tensor]:
    return [t for t in tree_leaves(value) if isinstance(t, Tensor)]


def _op_name(func: Callable) -> str:
    """``aten``'s name of an operation: ``Tensor.__rmul__`` -> ``mul``, ``F.linear`` -> ``linear``."""
    name = getattr(func, "__name__", type(func).__name__)
    if name.startswith("__") and name.endswith("__"):
        name = name[2:-2]
        name = name[1:] if name[:1] in "ri" and name[1:] in _REFLECTED else name
    return name


#: operators whose ``__r<op>__``/``__i<op>__`` forms name the same ``aten`` operator
_REFLECTED = frozenset(
    {"add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor"}
)


def _operator_arguments(func: Callable, args: tuple, kwargs: dict) -> list:
    """The arguments of a call as its ``aten`` operator takes them: an ``inplace`` flag is
    none (in ATen the in-place form is an operator of its own: ``F.relu(x, False)`` is
    ``aten::relu(x)``)."""
    try:
        bound = inspect.signature(func).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):  # (no signature to read: every argument)
        return [*args, *kwargs.values()]
    return [value for name, value in bound.items() if name != "inplace"]


class _Recorder(TorchFunctionMode):
    """Records the operations called while the model runs, in the current module scope."""

    def __init__(self, held: dict[int, tuple[str, str]], root: str) -> None:
        super().__init__()
        self.nodes: list[NodeDef] = []
        self.producer: dict[int, str] = {}
        self.alive: list[Tensor] = []  # keeps the tensors whose ids name producers
        self.held, self.stack = held, [root]  # (the scopes of the modules running)
        self.used: dict[str, int] = {}

    def unique(self, name: str) -> str:
        n = self.used.get(name, 0)
        self.used[name] = n + 1
        return name if not n else f"{name}.{n}"

    def add(self, name: str, op: str, inputs: list[str], produced: list[Tensor], attr: str | None) -> None:
        attrs = {"_output_shapes": _shapes(produced)} if produced else {}
        if attr is not None:
            attrs["attr"] = AttrValue(s=attr.encode())
        self.nodes.append(NodeDef(name=name, op=op, input=inputs, attr=attrs))
        for t in produced:
            self.producer[id(t)] = name
        self.alive.extend(produced)

    def source(self, t: Tensor) -> str | None:
        """The node that made ``t``: an earlier operation, an input, or the module attribute
        it is (a ``prim::GetAttr`` node, added at its first use)."""
        if id(t) not in self.producer and id(t) in self.held:
            scope, attr = self.held[id(t)]
            self.add(f"{scope}/{attr}/{attr}", "prim::GetAttr", [], [], f"{{ name :  {attr} }}")
            self.producer[id(t)] = f"{scope}/{attr}/{attr}"
        return self.producer.get(id(t))

    def argument(self, value: Any) -> str | None:
        """The node an operation's argument comes from: a tensor's source, a constant or a list
        (drawn here, before the operation), or None for what is not drawn."""
        if isinstance(value, Tensor):
            return self.source(value)
        scope = self.stack[-1]
        if isinstance(value, (list, tuple)):
            items = [self.argument(v) for v in value]
            if any(item is None for item in items):
                return None
            name = self.unique(f"{scope}/list")
            self.add(name, "prim::ListConstruct", items, [], "{}")
            return name
        if value is None or isinstance(value, (bool, int, float, str)):
            name = self.unique(f"{scope}/constant")
            shown = {} if value is None else {"value": int(value) if isinstance(value, bool) else value}
            self.add(name, "prim::Constant", [], [], str(shown).replace("'", " "))
            return name
        return None

    def __torch_function__(
        self, func: Callable, types: Any, args: tuple = (), kwargs: dict | None = None
    ) -> Any:
        out = func(*args, **(kwargs or {}))
        produced = _tensors(out)
        if produced:
            drawn = map(self.argument, _operator_arguments(func, args, kwargs or {}))
            inputs = [s for s in drawn if s is not None]
            name = _op_name(func)
            self.add(self.unique(f"{self.stack[-1]}/{name}"), f"aten::{name}", inputs, produced, "{}")
        return out


def _scopes(model: Any) -> tuple[dict[int, str], dict[int, tuple[str, str]]]:
    """Module id -> its scope name (``Net``, ``Net/Sequential[seq]/Linear[1]``), and each
    parameter's and buffer's id -> (its module's scope, its attribute name)."""
    scopes = {id(model): type(model).__name__}
    held: dict[int, tuple[str, str]] = {}
    for path, module in model.named_modules():
        if path:
            parent = model.get_submodule(path.rpartition(".")[0]) if "." in path else model
            scopes[id(module)] = f"{scopes[id(parent)]}/{type(module).__name__}[{path.rpartition('.')[2]}]"
        for attr, t in (*module.named_parameters(recurse=False), *module.named_buffers(recurse=False)):
            held.setdefault(id(t), (scopes[id(module)], attr))
    return scopes, held


def _input_names(model: Any, count: int) -> list[str]:
    """``forward``'s parameter names for ``count`` positional inputs (``input.<i>`` beyond them)."""
    try:
        params = [
            p.name
            for p in inspect.signature(model.forward).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"input.{i}" for i in range(count)]


def module_graph(model: Any, input_to_model: Any) -> GraphDef:
    """Run ``model(*inputs)`` once (no gradients) and return the graph of its operations."""
    inputs = input_to_model if isinstance(input_to_model, (tuple, list)) else (input_to_model,)
    scopes, held = _scopes(model)
    recorder = _Recorder(held, scopes[id(model)])
    names = _input_names(model, len(inputs))
    for name, value in zip(names, inputs):
        leaves = _tensors(value)
        for i, x in enumerate(leaves):
            recorder.add(f"input/{name}" + (f".{i}" if len(leaves) > 1 else ""), "IO Node", [], [x], "")

    def enter(module: Any, args: tuple) -> None:
        recorder.stack.append(scopes[id(module)])

    def leave(module: Any, args: tuple, output: Any) -> None:
        recorder.stack.pop()

    handles = [m.register_forward_pre_hook(enter) for m in model.modules()]
    handles += [m.register_forward_hook(leave) for m in model.modules()]
    try:
        with grad_mode.no_grad(), recorder:
            output = model(*inputs)
    finally:
        for h in handles:
            h.remove()
    first_op = sum(len(_tensors(value)) for value in inputs)  # (the outputs follow the inputs, as PyTorch's)
    for i, y in enumerate(_tensors(output), 1):
        source = recorder.producer.get(id(y))
        recorder.nodes.insert(
            first_op + i - 1,
            NodeDef(
                name=f"output/output.{i}",
                op="IO Node",
                input=[source] if source else [],
                attr={"_output_shapes": _shapes([y]), "attr": AttrValue(s=b"")},
            ),
        )
    return GraphDef(node=recorder.nodes, versions=VersionDef(producer=22))


def graph(model: Any, input_to_model: Any) -> tuple[GraphDef, RunMetadata]:
    """``module_graph`` and its run metadata (one CPU device, no step timings), the pair
    ``FileWriter.add_graph`` writes, as PyTorch's ``_pytorch_graph.graph`` returns it."""
    stats = StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0")])
    return module_graph(model, input_to_model), RunMetadata(step_stats=stats)
