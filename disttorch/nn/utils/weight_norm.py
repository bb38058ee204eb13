"""``weight_norm`` / ``remove_weight_norm``: the hook-based weight normalisation
(Salimans & Kingma 2016), ``w = g * v / ||v||``: ``<name>_g`` and ``<name>_v`` become the
parameters and ``<name>`` is recomputed before every forward. Deprecated in PyTorch in
favour of :func:`disttorch.nn.utils.parametrizations.weight_norm`, and kept as it is."""

from __future__ import annotations

import warnings
from typing import Any

from ..modules.module import Module
from ..parameter import Parameter
from ._norms import norm_except_dim, weight_norm_value

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]

_DEPRECATED = (
    "`torch.nn.utils.weight_norm` is deprecated in favor of `torch.nn.utils.parametrizations.weight_norm`."
)


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g``, ``<name>_v``."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Any:
        return weight_norm_value(
            getattr(module, self.name + "_g"), getattr(module, self.name + "_v"), self.dim
        )

    @staticmethod
    def apply(module: Module, name: str, dim: int) -> WeightNorm:
        # deprecated here, as in PyTorch: the warning names the line that called apply
        # (weight_norm's own, for a program that calls weight_norm)
        warnings.warn(_DEPRECATED, FutureWarning, stacklevel=2)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, fn.dim).detach().clone()))
        module.register_parameter(name + "_v", Parameter(weight.detach().clone()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight.detach().clone()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (norm over every dim but
    ``dim``; ``dim=None`` for the whole tensor). Deprecated: use
    :func:`disttorch.nn.utils.parametrizations.weight_norm`."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`weight_norm`: ``<name>`` becomes a parameter holding the current weight."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
