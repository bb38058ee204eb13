"""``torchvision.models._utils``: :class:`IntermediateLayerGetter`, a model's direct children
up to the last one asked for, run in order, returning the outputs of those asked for (how
DETR and segmentation heads take a ResNet's feature maps)."""

from __future__ import annotations

from collections import OrderedDict

from disttorch._tensor import Tensor
from disttorch.nn import Module, ModuleDict

__all__ = ["IntermediateLayerGetter"]


class IntermediateLayerGetter(ModuleDict):
    """Wraps ``model``'s direct children, in registration order, up to the last named in
    ``return_layers``; calling it runs them one after another on the input and returns an
    ``OrderedDict`` mapping ``return_layers[name]`` to each named child's output.

    Only modules registered as children and used in that order are supported (the model's
    ``forward`` is not consulted), as torchvision's.

    Args:
        model: the model whose children are taken.
        return_layers: child name -> the key its output is returned under.
    """

    _version = 2

    def __init__(self, model: Module, return_layers: dict[str, str]) -> None:
        if not set(return_layers).issubset(name for name, _ in model.named_children()):
            raise ValueError("return_layers are not present in model")
        asked = dict(return_layers)
        pending = {str(k): str(v) for k, v in return_layers.items()}
        layers: OrderedDict[str, Module] = OrderedDict()
        for name, child in model.named_children():
            layers[name] = child
            pending.pop(name, None)
            if not pending:
                break
        super().__init__(layers)
        self.return_layers = asked

    def forward(self, x: Tensor) -> OrderedDict[str, Tensor]:
        out: OrderedDict[str, Tensor] = OrderedDict()
        for name, child in self.items():
            x = child(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out
