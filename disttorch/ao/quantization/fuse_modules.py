"""``fuse_modules`` / ``fuse_modules_qat``: replace runs of modules (conv + batch norm + ReLU,
linear + ReLU, ...) by one fused module before quantization; the other members become
``nn.Identity``. For post-training quantization (eval mode) batch norm is folded into the
layer; for quantization-aware training (``fuse_modules_qat``, train mode) conv + batch norm
stay as ``intrinsic.ConvBn2d`` / ``ConvBnReLU2d``, which ``prepare_qat`` makes QAT layers."""

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

__all__ = ["fuse_modules", "fuse_modules_qat", "fuse_known_modules", "get_fuser_method"]

_CONV_RELU = {Conv1d: nni.ConvReLU1d, Conv2d: nni.ConvReLU2d, Conv3d: nni.ConvReLU3d}
_CONV_BN_QAT = {Conv2d: nni.ConvBn2d}
_CONV_BN_RELU_QAT = {Conv2d: nni.ConvBnReLU2d}


def _same_mode(*mods: Module) -> None:
    if len({m.training for m in mods}) != 1:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")


def _qat_fusable(layer: Module, bn: Module, fused: dict, mods: tuple) -> type:
    if bn.num_features != getattr(layer, "out_channels", getattr(layer, "out_features", None)):
        raise AssertionError(
            f"Output channel of {type(layer).__name__} must match num_features of {type(bn).__name__}"
        )
    if not bn.affine:
        raise AssertionError(f"Only support fusing {type(bn).__name__} with affine set to True")
    if not bn.track_running_stats:
        raise AssertionError(
            f"Only support fusing {type(bn).__name__} with tracking_running_stats set to True"
        )
    if type(layer) not in fused:
        raise NotImplementedError(f"Cannot fuse train modules: {mods} (disttorch's QAT fuses Conv2d)")
    return fused[type(layer)]


def fuse_conv_bn(is_qat: bool, conv: Module, bn: Module) -> Module:
    """Conv + batch norm: ``intrinsic.ConvBn2d`` for QAT, else one conv with the norm folded in."""
    _same_mode(conv, bn)
    if is_qat:
        return _qat_fusable(conv, bn, _CONV_BN_QAT, (conv, bn))(conv, bn)
    return fuse_conv_bn_eval(conv, bn)


def fuse_conv_bn_relu(is_qat: bool, conv: Module, bn: Module, relu: Module) -> Module:
    """Conv + batch norm + ReLU: ``intrinsic.ConvBnReLU2d`` for QAT, else ``ConvReLU`` of the
    folded conv."""
    _same_mode(conv, bn, relu)
    if is_qat:
        return _qat_fusable(conv, bn, _CONV_BN_RELU_QAT, (conv, bn, relu))(conv, bn, relu)
    return _CONV_RELU[type(conv)](fuse_conv_bn_eval(conv, bn), relu)


def fuse_linear_bn(is_qat: bool, linear: Module, bn: Module) -> Module:
    """Linear + batch norm folded into one linear layer (eval mode)."""
    _same_mode(linear, bn)
    if is_qat:
        raise NotImplementedError("QAT fusion of Linear and BatchNorm1d (LinearBn1d) is not in disttorch")
    return fuse_linear_bn_eval(linear, bn)


def _pair(fused: type) -> Callable:
    """A fuser that wraps its two modules in ``fused`` whatever ``is_qat``."""
    return lambda is_qat, first, second: fused(first, second)


_FUSERS: dict = {
    (Conv1d, BatchNorm1d): fuse_conv_bn,
    (Conv2d, BatchNorm2d): fuse_conv_bn,
    (Conv3d, BatchNorm3d): fuse_conv_bn,
    (Conv1d, BatchNorm1d, ReLU): fuse_conv_bn_relu,
    (Conv2d, BatchNorm2d, ReLU): fuse_conv_bn_relu,
    (Conv3d, BatchNorm3d, ReLU): fuse_conv_bn_relu,
    (Conv1d, ReLU): _pair(nni.ConvReLU1d),
    (Conv2d, ReLU): _pair(nni.ConvReLU2d),
    (Conv3d, ReLU): _pair(nni.ConvReLU3d),
    (Linear, ReLU): _pair(nni.LinearReLU),
    (BatchNorm2d, ReLU): _pair(nni.BNReLU2d),
    (Linear, BatchNorm1d): fuse_linear_bn,
}


def get_fuser_method(op_list: tuple, additional_fuser_method_mapping: dict | None = None) -> Callable:
    """The function ``fuser(is_qat, *modules)`` fusing modules of the types in ``op_list``."""
    mapping = {**_FUSERS, **(additional_fuser_method_mapping or {})}
    if op_list not in mapping:
        raise AssertionError(f"did not find fuser method for: {op_list} ")
    return mapping[op_list]


def fuse_known_modules(
    mod_list: list, is_qat: bool = False, additional_fuser_method_mapping: Any = None
) -> list:
    """``mod_list`` fused: the fused module first, then an ``nn.Identity`` per other member."""
    fuser = get_fuser_method(tuple(type(m) for m in mod_list), additional_fuser_method_mapping)
    identities = [Identity() for _ in mod_list[1:]]
    for identity in identities:
        identity.training = mod_list[0].training
    return [fuser(is_qat, *mod_list)] + identities


def _fuse(
    model: Module, modules_to_fuse: list, is_qat: bool, inplace: bool, fuser_func: Callable, **kwargs: Any
) -> Module:
    if not inplace:
        model = copy.deepcopy(model)
    groups = (
        modules_to_fuse
        if modules_to_fuse and isinstance(modules_to_fuse[0], (list, tuple))
        else [modules_to_fuse]
    )
    extra = kwargs.get("fuse_custom_config_dict") or {}
    for names in groups:
        modules = [model.get_submodule(name) for name in names]
        fused = fuser_func(modules, is_qat, extra.get("additional_fuser_method_mapping"))
        for name, new in zip(names, fused, strict=True):
            parent, _, leaf = name.rpartition(".")
            setattr(model.get_submodule(parent) if parent else model, leaf, new)
    return model


def fuse_modules(
    model: Module,
    modules_to_fuse: list,
    inplace: bool = False,
    fuser_func: Callable = fuse_known_modules,
    fuse_custom_config_dict: dict | None = None,
) -> Module:
    """Fuse each list of (dotted) submodule names in ``modules_to_fuse`` (or a single list)
    into one module, e.g. ``[["conv1", "bn1", "relu1"], ["fc", "relu2"]]`` (eval mode: batch
    norm is folded into the layer before it)."""
    return _fuse(
        model, modules_to_fuse, False, inplace, fuser_func, fuse_custom_config_dict=fuse_custom_config_dict
    )


def fuse_modules_qat(
    model: Module,
    modules_to_fuse: list,
    inplace: bool = False,
    fuser_func: Callable = fuse_known_modules,
    fuse_custom_config_dict: dict | None = None,
) -> Module:
    """``fuse_modules`` for quantization-aware training (train mode): conv + batch norm
    (+ ReLU) become ``intrinsic.ConvBn2d`` (``ConvBnReLU2d``), which keep the batch norm."""
    return _fuse(
        model, modules_to_fuse, True, inplace, fuser_func, fuse_custom_config_dict=fuse_custom_config_dict
    )
