"""``torchvision.models.feature_extraction``: a model's intermediate outputs by name, through an
FX trace. Each recorded node is named by the module it ran in: a leaf module's call by its
path (``layer1.0.conv1``), another operation by that path and the operation
(``layer1.0.add``, a repeat with ``_1``), the top level by the operation alone (``x``,
``flatten``); asking for a module that was traced into (``layer2``) selects the last node
recorded inside it."""

from __future__ import annotations

import re
from typing import Any

from ... import fx
from ...nn import Module

__all__ = ["create_feature_extractor", "get_graph_node_names"]


class _NodePathTracer(fx.Tracer):
    """An FX tracer that names every node by its module path; ``leaf_modules`` (classes)
    are recorded as single calls besides those of ``torch.nn``."""

    def __init__(self, *args: Any, leaf_modules: list | tuple = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.leaf_modules = tuple(leaf_modules)
        self.scope = ""
        self.node_to_qualname: dict[fx.Node, str] = {}

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        return isinstance(m, self.leaf_modules) or super().is_leaf_module(m, module_qualified_name)

    def call_module(self, m: Module, forward: Any, args: tuple, kwargs: dict) -> Any:
        outer, self.scope = self.scope, self.path_of_module(m)
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self.scope = outer

    def create_proxy(self, kind: str, target: Any, args: tuple, kwargs: dict, *rest: Any, **more: Any) -> Any:
        proxy = super().create_proxy(kind, target, args, kwargs, *rest, **more)
        if kind == "call_module":
            name = target
        else:
            base = re.sub(r"_\d+$", "", proxy.node.name)
            name = f"{self.scope}.{base}" if self.scope else base
        taken = set(self.node_to_qualname.values())
        unique, i = name, 0
        while unique in taken:
            i += 1
            unique = f"{name}_{i}"
        self.node_to_qualname[proxy.node] = unique
        return proxy


def _trace(model: Module, training: bool, tracer_kwargs: dict | None, concrete_args: dict | None):
    was_training = model.training
    model.train(training)
    try:
        tracer = _NodePathTracer(**(tracer_kwargs or {}))
        graph = tracer.trace(model, concrete_args=concrete_args)
    finally:
        model.train(was_training)
    return tracer, graph


def get_graph_node_names(
    model: Module,
    tracer_kwargs: dict | None = None,
    suppress_diff_warning: bool = False,
    concrete_args: dict | None = None,
) -> tuple[list[str], list[str]]:
    """The node names of ``model`` traced in training mode and in eval mode."""
    train = list(_trace(model, True, tracer_kwargs, concrete_args)[0].node_to_qualname.values())
    evaluate = list(_trace(model, False, tracer_kwargs, concrete_args)[0].node_to_qualname.values())
    return train, evaluate


def _as_dict(nodes: list[str] | dict[str, str]) -> dict[str, str]:
    if isinstance(nodes, dict):
        return dict(nodes)
    if isinstance(nodes, (list, tuple)):
        return {n: n for n in nodes}
    raise TypeError(f"return_nodes must be a list or a dict of node names, got {type(nodes).__name__}")


def create_feature_extractor(
    model: Module,
    return_nodes: list[str] | dict[str, str] | None = None,
    train_return_nodes: list[str] | dict[str, str] | None = None,
    eval_return_nodes: list[str] | dict[str, str] | None = None,
    tracer_kwargs: dict | None = None,
    suppress_diff_warning: bool = False,
    concrete_args: dict | None = None,
) -> fx.GraphModule:
    """An ``fx.GraphModule`` sharing ``model``'s submodules whose forward returns a dict of
    the named nodes' outputs (``return_nodes``: names, or a dict of name to output key)."""
    if return_nodes is None:
        if train_return_nodes is None or eval_return_nodes is None:
            raise ValueError(
                "Either `return_nodes` or `train_return_nodes` and `eval_return_nodes` together, should be specified"
            )
        if _as_dict(train_return_nodes) != _as_dict(eval_return_nodes):
            raise NotImplementedError("different train_return_nodes and eval_return_nodes are not supported")
        return_nodes = train_return_nodes
    elif train_return_nodes is not None or eval_return_nodes is not None:
        raise ValueError(
            "If `train_return_nodes` and `eval_return_nodes` are specified, then both should be specified, and `return_nodes` should not be"
        )
    wanted = _as_dict(return_nodes)
    tracer, graph = _trace(model, model.training, tracer_kwargs, concrete_args)
    names = list(tracer.node_to_qualname.values())
    for query in wanted:
        if not any(n == query or n.startswith(query + ".") for n in names):
            raise ValueError(
                f"node: '{query}' is not present in model. Hint: use `get_graph_node_names` to make sure the `return_nodes` you specified are present."
            )
    found: dict[str, fx.Node] = {}
    remaining = list(wanted)
    for node in reversed(list(graph.nodes)):
        qualname = tracer.node_to_qualname.get(node)
        if qualname is None:
            continue
        for query in remaining:
            if qualname == query or qualname.startswith(query + "."):
                found[wanted[query]] = node
                remaining.remove(query)
                break
    outputs = dict(reversed(list(found.items())))
    output = next(n for n in graph.nodes if n.op == "output")
    output.args = (outputs,)
    module = fx.GraphModule(tracer.root, graph, class_name=type(model).__name__)
    module.graph.eliminate_dead_code()
    module.graph.lint()
    module.recompile()
    return module
