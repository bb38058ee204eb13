"""``fuse_modules``: replace runs of modules (conv + batch norm + ReLU, linear + ReLU, ...)
by one fused module before quantization; the other members become ``nn.Identity``."""

from __future__ import annotations

import copy
from typing import Any, Callable

from ...nn.modules.activation import ReLU
from ...nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from ...nn.modules.conv import Conv1d, Conv2d, Conv3d
from ...nn.modules.linear import Identity, Linear
from ...nn.modules.module import Module
from ...nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval
from ..nn import intrinsic as nni

__all__ = ["fuse_modules", "fuse_known_modules", "get_fuser_method"]

_CONV_RELU = {Conv1d: nni.ConvReLU1d, Conv2d: nni.ConvReLU2d, Conv3d: nni.ConvReLU3d}


def _conv_bn(conv: Module, bn: Module) -> Module:
    _same_mode(conv, bn)
    return fuse_conv_bn_eval(conv, bn)


def _conv_bn_relu(conv: Module, bn: Module, relu: Module) -> Module:
    _same_mode(conv, bn)
    return _CONV_RELU[type(conv)](fuse_conv_bn_eval(conv, bn), relu)


def _same_mode(a: Module, b: Module) -> None:
    if a.training != b.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if a.training:
        raise NotImplementedError(
            "fusing batch norm in training mode makes QAT modules (ConvBn2d...), which disttorch does "
            "not have: call model.eval() before fuse_modules"
        )


_FUSERS: dict = {
    (Conv1d, BatchNorm1d): _conv_bn,
    (Conv2d, BatchNorm2d): _conv_bn,
    (Conv3d, BatchNorm3d): _conv_bn,
    (Conv1d, BatchNorm1d, ReLU): _conv_bn_relu,
    (Conv2d, BatchNorm2d, ReLU): _conv_bn_relu,
    (Conv3d, BatchNorm3d, ReLU): _conv_bn_relu,
    (Conv1d, ReLU): nni.ConvReLU1d,
    (Conv2d, ReLU): nni.ConvReLU2d,
    (Conv3d, ReLU): nni.ConvReLU3d,
    (Linear, ReLU): nni.LinearReLU,
    (BatchNorm2d, ReLU): nni.BNReLU2d,
    (Linear, BatchNorm1d): lambda linear, bn: (_same_mode(linear, bn), fuse_linear_bn_eval(linear, bn))[1],
}


def get_fuser_method(op_list: tuple, additional_fuser_method_mapping: dict | None = None) -> Callable:
    """The function fusing modules of the types in ``op_list`` (in order)."""
    mapping = {**_FUSERS, **(additional_fuser_method_mapping or {})}
    if op_list not in mapping:
        raise AssertionError(f"did not find fuser method for: {op_list} ")
    return mapping[op_list]


def fuse_known_modules(
    mod_list: list, is_qat: bool = False, additional_fuser_method_mapping: Any = None
) -> list:
    """``mod_list`` fused: the fused module first, then an ``nn.Identity`` per other member."""
    fuser = get_fuser_method(tuple(type(m) for m in mod_list), additional_fuser_method_mapping)
    return [fuser(*mod_list)] + [Identity() for _ in mod_list[1:]]


def fuse_modules(
    model: Module,
    modules_to_fuse: list,
    inplace: bool = False,
    fuser_func: Callable = fuse_known_modules,
    **kwargs: Any,
) -> Module:
    """Fuse each list of (dotted) submodule names in ``modules_to_fuse`` (or a single list)
    into one module, e.g. ``[["conv1", "bn1", "relu1"], ["fc", "relu2"]]``."""
    if not inplace:
        model = copy.deepcopy(model)
    groups = (
        modules_to_fuse
        if modules_to_fuse and isinstance(modules_to_fuse[0], (list, tuple))
        else [modules_to_fuse]
    )
    for names in groups:
        modules = [model.get_submodule(name) for name in names]
        for name, new in zip(names, fuser_func(modules), strict=True):
            parent, _, leaf = name.rpartition(".")
            setattr(model.get_submodule(parent) if parent else model, leaf, new)
    return model
