"""``torch.ao.quantization`` (also ``torch.quantization``): eager-mode quantization.

Dynamic quantization (``quantize_dynamic``) replaces float layers by
``ao.nn.quantized.dynamic`` ones; static quantization marks the quantized region with
``QuantStub``/``DeQuantStub``, ``prepare``s observers, calibrates and ``convert``s to
``ao.nn.quantized`` modules. Observers choose quantization parameters exactly as PyTorch's
do; ``QConfig`` says which observers a module gets.
"""

from .fuse_modules import fuse_known_modules, fuse_modules, get_fuser_method
from .observer import (
    MinMaxObserver,
    ObserverBase,
    PerChannelMinMaxObserver,
    PlaceholderObserver,
    default_dynamic_quant_observer,
    default_observer,
    default_per_channel_weight_observer,
    default_placeholder_observer,
    default_weight_observer,
)
from .qconfig import QConfig, default_dynamic_qconfig, default_qconfig, per_channel_dynamic_qconfig
from .quantization_mappings import (
    get_default_dynamic_quant_module_mappings,
    get_default_static_quant_module_mappings,
)
from .quantize import convert, prepare, propagate_qconfig_, quantize_dynamic, swap_module
from .stubs import DeQuantStub, QuantStub

__all__ = [
    "MinMaxObserver",
    "DeQuantStub",
    "ObserverBase",
    "PerChannelMinMaxObserver",
    "PlaceholderObserver",
    "QConfig",
    "QuantStub",
    "convert",
    "default_dynamic_qconfig",
    "default_dynamic_quant_observer",
    "default_observer",
    "default_per_channel_weight_observer",
    "default_placeholder_observer",
    "default_qconfig",
    "default_weight_observer",
    "fuse_known_modules",
    "fuse_modules",
    "get_fuser_method",
    "get_default_dynamic_quant_module_mappings",
    "get_default_static_quant_module_mappings",
    "per_channel_dynamic_qconfig",
    "prepare",
    "propagate_qconfig_",
    "quantize_dynamic",
    "swap_module",
]
