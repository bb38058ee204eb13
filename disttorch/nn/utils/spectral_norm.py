"""``spectral_norm`` / ``remove_spectral_norm``: the hook-based spectral normalisation
(Miyato et al. 2018): ``<name>_orig`` is the parameter, ``<name>_u`` / ``<name>_v`` the
power-iteration vectors (buffers), and ``<name> = <name>_orig / sigma`` is recomputed
before every forward, with ``n_power_iterations`` steps of power iteration in training."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import _random
from ..._tensor import Tensor
from ...autograd import grad_mode
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from ..parameter import Parameter
from ._norms import as_matrix

__all__ = ["SpectralNorm", "remove_spectral_norm", "spectral_norm"]


def _normalize(a: np.ndarray, eps: float) -> np.ndarray:
    return a / max(float(np.linalg.norm(a)), eps)


def power_iteration(mat: np.ndarray, u: Tensor, v: Tensor, n: int, eps: float) -> None:
    """``n`` steps of power iteration on ``mat``, written into ``u`` and ``v`` in place."""
    for _ in range(n):
        v._data[...] = _normalize(mat.T @ u._data, eps)
        u._data[...] = _normalize(mat @ v._data, eps)
    if n:
        u._bump_version()
        v._bump_version()


def sigma(weight_mat: Tensor, u: Tensor, v: Tensor) -> Tensor:
    """The spectral-norm estimate ``u . (W v)`` (differentiable in ``W``)."""
    return (u.clone() * weight_mat.matmul(v.clone())).sum()


class SpectralNorm:
    """The forward pre-hook recomputing ``module.<name>`` = ``<name>_orig / sigma``."""

    def __init__(
        self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        if n_power_iterations <= 0:
            raise ValueError(
                f"Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}"
            )
        self.name, self.dim, self.n_power_iterations, self.eps = name, dim, n_power_iterations, eps

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        mat = as_matrix(weight, self.dim)
        if do_power_iteration:
            power_iteration(mat._data, u, v, self.n_power_iterations, self.eps)
        return weight / sigma(mat, u, v)

    def remove(self, module: Module) -> None:
        with grad_mode.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int, eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        mat = as_matrix(weight, dim)._data
        h, w = mat.shape
        engine = _random._gen(None)  # PyTorch: weight.new_empty(h).normal_(0, 1), then w
        u = Tensor._make(_normalize(_random._normal_array(engine, (h,), mat.dtype, 0.0, 1.0), eps))
        v = Tensor._make(_normalize(_random._normal_array(engine, (w,), mat.dtype, 0.0, 1.0), eps))
        del module._parameters[name]
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Divide ``module.<name>`` by its largest singular value, estimated by power iteration
    (``n_power_iterations`` steps per training forward). ``dim`` (default 0, 1 for
    transposed convolutions) is the output dim. PyTorch recommends the parametrization
    :func:`disttorch.nn.utils.parametrizations.spectral_norm`."""
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`spectral_norm`: ``<name>`` becomes a parameter holding the normalised weight."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
