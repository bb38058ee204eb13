"""Eager-mode quantization's walks over a model: ``propagate_qconfig_`` (which modules get
which ``QConfig``), ``convert`` (swap each configured module for its quantized class) and
``quantize_dynamic`` (both, with dynamic quantization's defaults)."""

from __future__ import annotations

import copy
from typing import Any

from ... import _dtype
from ...nn.modules.module import Module
from .qconfig import default_dynamic_qconfig
from .quantization_mappings import get_default_dynamic_quant_module_mappings

__all__ = ["propagate_qconfig_", "convert", "swap_module", "quantize_dynamic"]


def propagate_qconfig_(
    module: Module, qconfig_dict: dict | None = None, prepare_custom_config_dict: Any = None
) -> None:
    """Give every submodule a ``qconfig`` attribute: its own if it has one, else the entry of
    its qualified name in ``qconfig_dict``, else of its type, else its parent's (in place)."""
    _propagate(module, qconfig_dict or {}, None, "")


def _propagate(module: Module, spec: dict, parent: Any, prefix: str) -> None:
    qconfig = spec.get(type(module), parent)
    qconfig = spec.get(prefix, qconfig)
    qconfig = getattr(module, "qconfig", qconfig)
    module.qconfig = qconfig
    for name, child in module.named_children():
        _propagate(child, spec, qconfig, f"{prefix}.{name}" if prefix else name)


def swap_module(mod: Module, mapping: dict, custom_module_class_mapping: dict | None = None) -> Module:
    """``mod``'s quantized replacement when it has a ``qconfig`` and its type is in
    ``mapping``, else ``mod`` itself."""
    if getattr(mod, "qconfig", None) is not None and type(mod) in mapping:
        new = mapping[type(mod)].from_float(mod)
        new.training = mod.training
        return new
    return mod


def convert(
    module: Module,
    mapping: dict | None = None,
    inplace: bool = False,
    remove_qconfig: bool = True,
    **kwargs: Any,
) -> Module:
    """Swap every configured submodule of ``module`` whose type is in ``mapping`` for its
    quantized class (``from_float``), depth first; ``remove_qconfig`` drops the ``qconfig``
    attributes afterwards."""
    if not inplace:
        module = copy.deepcopy(module)
    _convert(module, get_default_dynamic_quant_module_mappings() if mapping is None else mapping)
    if remove_qconfig:
        for m in module.modules():
            if "qconfig" in vars(m):
                del m.qconfig
    return module


def _convert(module: Module, mapping: dict) -> None:
    swapped = {}
    for name, child in module.named_children():
        if type(child) not in mapping:
            _convert(child, mapping)
        swapped[name] = swap_module(child, mapping)
    for name, new in swapped.items():
        if new is not module._modules[name]:
            module._modules[name] = new


def quantize_dynamic(
    model: Module,
    qconfig_spec: Any = None,
    dtype: Any = _dtype.qint8,
    mapping: dict | None = None,
    inplace: bool = False,
) -> Module:
    """``model`` with its ``nn.Linear`` (and, by ``qconfig_spec``, other) layers replaced by
    dynamically quantized ones: weights quantized now (qint8), activations at every call.

    Args:
        model: the float model.
        qconfig_spec: a set of module types (or qualified names) to quantize with
            ``dtype``'s default ``QConfig``, or a dict from types/names to ``QConfig``;
            ``None``: every Linear, LSTM and GRU.
        dtype: ``disttorch.qint8`` (PyTorch's float16 dynamic quantization is not here).
        mapping: float class -> quantized class (default: the dynamic mapping).
        inplace: change ``model`` itself instead of a deep copy.
    """
    if dtype is not _dtype.qint8:
        raise ValueError(
            f"Don't know how to quantize with default settings for {dtype}. Provide full qconfig "
            "please (disttorch quantizes dynamically to qint8)"
        )
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if qconfig_spec is None:
        qconfig_spec = dict.fromkeys(mapping, default_dynamic_qconfig)
    elif isinstance(qconfig_spec, set):
        qconfig_spec = dict.fromkeys(qconfig_spec, default_dynamic_qconfig)
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    convert(model, mapping, inplace=True)
    return model
