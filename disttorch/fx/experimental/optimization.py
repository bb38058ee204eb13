"""``torch.fx.experimental.optimization``: inference rewrites of a traced module.

``fuse`` folds each eval-mode batch norm into the convolution or linear layer that feeds it
(and only it); ``remove_dropout`` drops the dropout layers. Both trace the module with
:func:`disttorch.fx.symbolic_trace` and return a new ``GraphModule``. PyTorch's MKL-DNN
passes (``optimize_for_inference``, ``modules_to_mkldnn``) have no counterpart here."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ... import nn
from ...nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval
from .._symbolic_trace import symbolic_trace
from ..graph_module import GraphModule
from ..interpreter import Transformer
from ..node import Node

__all__ = ["fuse", "matches_module_pattern", "remove_dropout", "replace_node_module"]

#: (producer, batch norm) pairs that ``fuse`` folds
_FUSIBLE = (
    (nn.Conv1d, nn.BatchNorm1d),
    (nn.Conv2d, nn.BatchNorm2d),
    (nn.Conv3d, nn.BatchNorm3d),
    (nn.Linear, nn.BatchNorm1d),
)


def matches_module_pattern(pattern: Iterable[type], node: Node, modules: dict[str, nn.Module]) -> bool:
    """Whether ``node`` calls a module of type ``pattern[1]`` on the output of a node that
    calls a module of type ``pattern[0]`` (exact types, as PyTorch's)."""
    if not node.args:
        return False
    for expected, current in zip(pattern, (node.args[0], node)):
        if not (
            isinstance(current, Node) and current.op == "call_module" and isinstance(current.target, str)
        ):
            return False
        if type(modules.get(current.target)) is not expected:
            return False
    return True


def replace_node_module(node: Node, modules: dict[str, nn.Module], new_module: nn.Module) -> None:
    """Put ``new_module`` where the module that ``node`` calls lives (in its parent module
    and in ``modules``)."""
    if not isinstance(node.target, str):
        raise AssertionError(f"Expected str target, got {type(node.target)}")
    parent, _, name = node.target.rpartition(".")
    modules[node.target] = new_module
    setattr(modules[parent], name, new_module)


def fuse(model: nn.Module, inplace: bool = False, no_trace: bool = False) -> nn.Module:
    """Fold each batch norm (with running statistics) into the convolution or linear layer
    whose output only it reads; for inference (the model's running statistics are used).
    Works on a deep copy unless ``inplace``; ``no_trace`` reuses a ``GraphModule`` as is."""
    if not inplace:
        model = copy.deepcopy(model)
    traced = model if no_trace and isinstance(model, GraphModule) else symbolic_trace(model)
    modules = dict(traced.named_modules())
    graph = copy.deepcopy(traced.graph)
    for pattern in _FUSIBLE:
        for node in list(graph.nodes):
            if not matches_module_pattern(pattern, node, modules):
                continue
            producer = node.args[0]
            bn = modules[node.target]
            if len(producer.users) > 1 or not bn.track_running_stats:
                continue
            fold = fuse_linear_bn_eval if pattern[0] is nn.Linear else fuse_conv_bn_eval
            replace_node_module(producer, modules, fold(modules[producer.target], bn))
            node.replace_all_uses_with(producer)
            graph.erase_node(node)
    return GraphModule(traced, graph)


class _DropoutRemover(Transformer):
    def call_module(self, target: Any, args: tuple, kwargs: dict) -> Any:
        if isinstance(self.submodules[target], nn.Dropout):
            if len(args) != 1:
                raise AssertionError(f"Expected 1 arg for Dropout, got {len(args)}")
            return args[0]
        return super().call_module(target, args, kwargs)


def remove_dropout(model: nn.Module) -> nn.Module:
    """A ``GraphModule`` of ``model`` with every ``nn.Dropout`` call replaced by its input."""
    return _DropoutRemover(symbolic_trace(model)).transform()
