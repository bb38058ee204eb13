"""Eager-mode quantization's walks over a model: ``propagate_qconfig_`` (which modules get
which ``QConfig``), ``prepare`` (attach observers to the outputs to quantize), ``convert``
(swap each configured module for its quantized class) and ``quantize_dynamic``."""

from __future__ import annotations

import copy
import functools
import warnings
from typing import Any, Callable, TypeVar

from ... import _dtype, _native_warnings
from ...nn.modules.linear import Linear
from ...nn.modules.module import Module
from ...nn.modules.rnn import GRU, LSTM
from ..nn.quantized import FloatFunctional
from .qconfig import default_dynamic_qconfig, float16_dynamic_qconfig
from .quantization_mappings import (
    OBSERVED,
    get_default_dynamic_quant_module_mappings,
    get_default_qat_module_mappings,
    get_default_static_quant_module_mappings,
)

__all__ = ["propagate_qconfig_", "prepare", "prepare_qat", "convert", "swap_module", "quantize_dynamic"]

#: PyTorch 2.13's deprecation of its quantization API, warned at each call of the entry points
DEPRECATION_WARNING = (
    "torch.ao.quantization is deprecated and will be removed in 2.10. \n"
    "For migrations of users: \n"
    "1. Eager mode quantization (torch.ao.quantization.quantize, "
    "torch.ao.quantization.quantize_dynamic), please migrate to use torchao eager mode "
    "quantize_ API instead \n"
    "2. FX graph mode quantization (torch.ao.quantization.quantize_fx.prepare_fx,"
    "torch.ao.quantization.quantize_fx.convert_fx, please migrate to use torchao pt2e quantization "
    "API instead (prepare_pt2e, convert_pt2e) \n"
    "3. pt2e quantization has been migrated to torchao (https://github.com/pytorch/ao/tree/main/torchao/quantization/pt2e) \n"
    "see https://github.com/pytorch/ao/issues/2259 for more details"
)

_F = TypeVar("_F", bound=Callable[..., Any])


def _deprecated(fn: _F) -> _F:
    """``fn``, warning :data:`DEPRECATION_WARNING` (a ``DeprecationWarning``) at the program's
    line on each call, as PyTorch's entry points marked ``@deprecated`` do."""

    @functools.wraps(fn)
    def warned(*args: Any, **kwargs: Any) -> Any:
        _native_warnings.warn(DEPRECATION_WARNING, DeprecationWarning)
        return fn(*args, **kwargs)

    return warned  # type: ignore[return-value]


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


def _observe_output(module: Module, inputs: Any, output: Any) -> Any:
    """The forward hook ``prepare`` adds: the observer's result replaces the output (the
    output itself for an observer, its fake-quantized form for a ``FakeQuantize``)."""
    return module.activation_post_process(output)


@_deprecated
def prepare(model: Module, inplace: bool = False, allow_list: Any = None, **kwargs: Any) -> Module:
    """Attach an observer (``qconfig.activation()``, as ``activation_post_process``) to the
    output of every ``QuantStub`` and quantizable layer that has a ``qconfig``; run
    calibration data through the result, then ``convert`` it."""
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model)
    if not any(getattr(m, "qconfig", None) is not None for m in model.modules()):
        warnings.warn(
            "None of the submodule got qconfig applied. Make sure you passed correct configuration "
            "through `qconfig_dict` or by assigning the `.qconfig` attribute directly on submodules",
            stacklevel=2,
        )
    _add_observers(model, tuple(allow_list) if allow_list is not None else OBSERVED)
    return model


def _add_observers(module: Module, observed: tuple) -> None:
    """Observe the outputs of ``observed`` modules; a fused module is observed as a whole."""
    for child in list(module.children()):
        if isinstance(child, FloatFunctional) and getattr(child, "qconfig", None) is not None:
            child.activation_post_process = child.qconfig.activation()  # its ops call it
        elif type(child) in observed:
            if getattr(child, "qconfig", None) is not None:
                child.add_module("activation_post_process", child.qconfig.activation())
                child._observer_hook = child.register_forward_hook(_observe_output)
        else:
            _add_observers(child, observed)


@_deprecated
def prepare_qat(model: Module, mapping: dict | None = None, inplace: bool = False) -> Module:
    """Quantization-aware training: swap configured layers for their QAT forms (weights
    fake-quantized) and attach ``qconfig.activation()`` fake quantizers to their outputs;
    train, then ``convert`` (after ``eval()``)."""
    if not model.training:
        raise AssertionError("prepare_qat only works on models in training mode")
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model)
    convert(
        model,
        get_default_qat_module_mappings() if mapping is None else mapping,
        inplace=True,
        remove_qconfig=False,
    )
    return prepare(model, inplace=True)


def swap_module(mod: Module, mapping: dict, custom_module_class_mapping: dict | None = None) -> Module:
    """``mod``'s quantized replacement when it has a ``qconfig`` and its type is in
    ``mapping``, else ``mod`` itself."""
    if getattr(mod, "qconfig", None) is not None and type(mod) in mapping:
        new = mapping[type(mod)].from_float(mod)
        new.training = mod.training
        return new
    return mod


@_deprecated
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
    _convert(module, get_default_static_quant_module_mappings() if mapping is None else mapping)
    if remove_qconfig:
        for m in module.modules():
            if "qconfig" in vars(m):
                del m.qconfig
            if "_observer_hook" in vars(m):  # an observed module left float: drop its observer
                m._observer_hook.remove()
                del m._observer_hook
                del m.activation_post_process
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


@_deprecated
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
        dtype: ``disttorch.qint8`` or ``disttorch.float16`` (weights rounded to float16).
        mapping: float class -> quantized class (default: the dynamic mapping).
        inplace: change ``model`` itself instead of a deep copy.
    """
    defaults = {_dtype.qint8: default_dynamic_qconfig, _dtype.float16: float16_dynamic_qconfig}
    if dtype not in defaults:
        raise ValueError(
            f"Don't know how to quantize with default settings for {dtype}. Provide full qconfig please"
        )
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if qconfig_spec is None:  # the recurrent and linear layers (embeddings need their own qconfig)
        qconfig_spec = dict.fromkeys((Linear, LSTM, GRU), defaults[dtype])
    elif isinstance(qconfig_spec, set):
        qconfig_spec = dict.fromkeys(qconfig_spec, defaults[dtype])
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    convert(model, mapping, inplace=True)
    return model
