"""``torch.ao.quantization`` (also ``torch.quantization``): eager-mode quantization.

Dynamic quantization (``quantize_dynamic``) replaces float layers by
``ao.nn.quantized.dynamic`` ones; static quantization marks the quantized region with
``QuantStub``/``DeQuantStub``, ``prepare``s observers, calibrates and ``convert``s to
``ao.nn.quantized`` modules; quantization-aware training (``prepare_qat``) trains with
fake-quantized weights and activations first (``fuse_modules_qat``,
``get_default_qat_qconfig``; ``intrinsic.qat.freeze_bn_stats`` and ``disable_observer``
late in training). Observers choose quantization parameters
exactly as PyTorch's do; ``QConfig`` says which observers a module gets.
"""

from .fake_quantize import (
    FakeQuantize,
    FusedMovingAvgObsFakeQuantize,
    default_fake_quant,
    default_fused_act_fake_quant,
    default_fused_per_channel_wt_fake_quant,
    default_fused_wt_fake_quant,
    default_per_channel_weight_fake_quant,
    default_weight_fake_quant,
    disable_fake_quant,
    disable_observer,
    enable_fake_quant,
    enable_observer,
)
from .fuse_modules import fuse_known_modules, fuse_modules, fuse_modules_qat, get_fuser_method
from .histogram_observer import HistogramObserver
from .observer import (
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    ObserverBase,
    PerChannelMinMaxObserver,
    PlaceholderObserver,
    default_dynamic_quant_observer,
    default_float_qparams_observer,
    default_observer,
    default_per_channel_weight_observer,
    default_placeholder_observer,
    default_weight_observer,
)
from .qconfig import (
    QConfig,
    default_dynamic_qconfig,
    default_qat_qconfig,
    default_qconfig,
    float16_dynamic_qconfig,
    float_qparams_weight_only_qconfig,
    get_default_qat_qconfig,
    get_default_qconfig,
    per_channel_dynamic_qconfig,
)
from .quantization_mappings import (
    get_default_dynamic_quant_module_mappings,
    get_default_qat_module_mappings,
    get_default_static_quant_module_mappings,
)
from .quantize import convert, prepare, prepare_qat, propagate_qconfig_, quantize_dynamic, swap_module
from .stubs import DeQuantStub, QuantStub

__all__ = [
    "DeQuantStub",
    "FakeQuantize",
    "FusedMovingAvgObsFakeQuantize",
    "HistogramObserver",
    "MinMaxObserver",
    "MovingAverageMinMaxObserver",
    "MovingAveragePerChannelMinMaxObserver",
    "ObserverBase",
    "PerChannelMinMaxObserver",
    "PlaceholderObserver",
    "QConfig",
    "QuantStub",
    "convert",
    "default_dynamic_qconfig",
    "default_dynamic_quant_observer",
    "default_fake_quant",
    "default_float_qparams_observer",
    "default_fused_act_fake_quant",
    "default_fused_per_channel_wt_fake_quant",
    "default_fused_wt_fake_quant",
    "default_observer",
    "default_per_channel_weight_fake_quant",
    "default_per_channel_weight_observer",
    "default_placeholder_observer",
    "default_qat_qconfig",
    "default_qconfig",
    "default_weight_fake_quant",
    "default_weight_observer",
    "disable_fake_quant",
    "disable_observer",
    "enable_fake_quant",
    "enable_observer",
    "float16_dynamic_qconfig",
    "float_qparams_weight_only_qconfig",
    "fuse_known_modules",
    "fuse_modules",
    "fuse_modules_qat",
    "get_default_dynamic_quant_module_mappings",
    "get_default_qat_module_mappings",
    "get_default_qat_qconfig",
    "get_default_qconfig",
    "get_default_static_quant_module_mappings",
    "get_fuser_method",
    "per_channel_dynamic_qconfig",
    "prepare",
    "prepare_qat",
    "propagate_qconfig_",
    "quantize_dynamic",
    "swap_module",
]
