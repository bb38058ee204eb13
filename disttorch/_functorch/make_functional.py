"""Modules as functions of their parameters (``functorch.make_functional`` and friends):
``fmodel, params = make_functional(model)``, then ``fmodel(params, x)`` runs a copy of
``model`` with ``params`` in place of its own (by ``torch.func.functional_call``)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from .._tensor import Tensor
from ..nn.modules.module import Module
from ..nn.utils.stateless import functional_call
from ..ops.shape import stack

__all__ = [
    "FunctionalModule",
    "FunctionalModuleWithBuffers",
    "combine_state_for_ensemble",
    "make_functional",
    "make_functional_with_buffers",
]


def _members(named: Any) -> tuple[tuple, tuple, dict]:
    """``(tensors, names, names_map)`` of a module's parameters or buffers: each tensor once,
    by its first name, and every name it has (tied weights have several)."""
    first: dict[int, str] = {}
    names_map: dict[str, list[str]] = {}
    tensors, names = [], []
    for name, t in named(remove_duplicate=False):
        key = first.setdefault(id(t), name)
        names_map.setdefault(key, []).append(name)
        if key == name:
            tensors.append(t)
            names.append(name)
    return tuple(tensors), tuple(names), names_map


class FunctionalModule(Module):
    """What :func:`make_functional` returns: ``self(params, *args)`` runs the module's copy
    with ``params`` (in the order of ``param_names``)."""

    def __init__(self, stateless_model: Module, param_names: tuple, names_map: dict) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.names_map = names_map

    def forward(self, params: Iterable[Tensor], *args: Any, **kwargs: Any) -> Any:
        return _call(self.stateless_model, self.names_map, self.param_names, tuple(params), args, kwargs)


class FunctionalModuleWithBuffers(Module):
    """What :func:`make_functional_with_buffers` returns: ``self(params, buffers, *args)``."""

    def __init__(
        self, stateless_model: Module, param_names: tuple, buffer_names: tuple, param_names_map: dict,
        buffer_names_map: dict,
    ) -> None:  # fmt: skip
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names
        self.all_names_map = {**param_names_map, **buffer_names_map}

    def forward(self, params: Iterable[Tensor], buffers: Iterable[Tensor], *args: Any, **kwargs: Any) -> Any:
        names = self.param_names + self.buffer_names
        return _call(
            self.stateless_model, self.all_names_map, names, tuple(params) + tuple(buffers), args, kwargs
        )


def _call(model: Module, names_map: dict, names: tuple, tensors: tuple, args: tuple, kwargs: dict) -> Any:
    if len(tensors) != len(names):
        raise RuntimeError(f"Expected {len(names)} tensors (one per name in {names}), got {len(tensors)}")
    state = {alias: t for name, t in zip(names, tensors) for alias in names_map[name]}
    return functional_call(model, state, args, kwargs)


def make_functional(model: Module, disable_autograd_tracking: bool = False) -> tuple[FunctionalModule, tuple]:
    """``(fmodel, params)``: a function of ``model``'s parameters and inputs, and the parameters
    of the copy it runs (not requiring grad with ``disable_autograd_tracking``)."""
    if not isinstance(model, Module):
        raise RuntimeError(f"Expected model to be an nn.Module, got {type(model).__name__}")
    if len(tuple(model.buffers())) > 0:
        raise RuntimeError(
            "make_functional(model): `model` has buffers. Please use make_functional_with_buffers(model) instead."
        )
    clone = copy.deepcopy(model)
    params, names, names_map = _members(clone.named_parameters)
    _untracked(params, disable_autograd_tracking)
    return FunctionalModule(clone, names, names_map), params


def make_functional_with_buffers(
    model: Module, disable_autograd_tracking: bool = False
) -> tuple[FunctionalModuleWithBuffers, tuple, tuple]:
    """``(fmodel, params, buffers)``, as :func:`make_functional` with the buffers too."""
    if not isinstance(model, Module):
        raise RuntimeError(f"Expected model to be an nn.Module, got {type(model).__name__}")
    clone = copy.deepcopy(model)
    params, names, names_map = _members(clone.named_parameters)
    buffers, buffer_names, buffer_map = _members(clone.named_buffers)
    _untracked(params, disable_autograd_tracking)
    return FunctionalModuleWithBuffers(clone, names, buffer_names, names_map, buffer_map), params, buffers


def _untracked(params: tuple, disable: bool) -> None:
    if disable:
        for p in params:
            p.requires_grad_(False)


def combine_state_for_ensemble(models: Sequence[Module]) -> tuple[FunctionalModuleWithBuffers, tuple, tuple]:
    """``(fmodel, params, buffers)`` for ``vmap(fmodel, (0, 0, None))(params, buffers, x)``: the
    models' parameters and buffers stacked (detached) along a new first dimension."""
    if len(models) == 0:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError(
            "combine_state_for_ensemble: Expected all models to have the same training/eval mode."
        )
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same class.")
    made = [make_functional_with_buffers(m) for m in models]
    params = tuple(stack(list(ps)).detach() for ps in zip(*(m[1] for m in made)))
    buffers = tuple(stack(list(bs)).detach() for bs in zip(*(m[2] for m in made)))
    return made[0][0], params, buffers
