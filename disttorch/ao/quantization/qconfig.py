"""``QConfig``: which observers make a module's activation and weight quantization
parameters, and PyTorch's default configurations."""

from __future__ import annotations

from typing import Any, NamedTuple

from ... import _dtype
from .fake_quantize import (
    FakeQuantize,
    FusedMovingAvgObsFakeQuantize,
    default_fake_quant,
    default_fused_per_channel_wt_fake_quant,
    default_fused_wt_fake_quant,
    default_per_channel_weight_fake_quant,
    default_weight_fake_quant,
)
from .histogram_observer import HistogramObserver
from .observer import (
    MovingAverageMinMaxObserver,
    PlaceholderObserver,
    default_dynamic_quant_observer,
    default_float_qparams_observer,
    default_observer,
    default_per_channel_weight_observer,
    default_weight_observer,
)

__all__ = [
    "QConfig",
    "get_default_qconfig",
    "get_default_qat_qconfig",
    "default_qconfig",
    "default_qat_qconfig",
    "default_dynamic_qconfig",
    "float16_dynamic_qconfig",
    "float_qparams_weight_only_qconfig",
    "per_channel_dynamic_qconfig",
]


class QConfig(NamedTuple):
    """Observer classes (or ``with_args`` partials) for a module's activation and weight:
    each call makes a fresh observer."""

    activation: Any
    weight: Any


#: static quantization with min/max observers: activations quint8 in [0, 127], weights
#: per-tensor symmetric qint8 (PyTorch's ``default_qconfig``)
default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
#: quantization-aware training: fake-quantized activations (quint8, 7 bits) and weights
#: (per-tensor symmetric qint8), moving-average observers (PyTorch's ``default_qat_qconfig``)
default_qat_qconfig = QConfig(activation=default_fake_quant, weight=default_weight_fake_quant)
#: dynamic quantization: activations quantized per call to quint8, weights per-tensor
#: symmetric qint8 (PyTorch's default for quantize_dynamic with dtype=qint8)
default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer, weight=default_weight_observer)
#: float16 dynamic quantization: weights rounded to float16, float32 activations
float16_dynamic_qconfig = QConfig(
    activation=PlaceholderObserver.with_args(dtype=_dtype.float16, is_dynamic=True),
    weight=PlaceholderObserver.with_args(dtype=_dtype.float16),
)
#: weight-only quantization of embeddings: rows quint8 with float scales and zero points
float_qparams_weight_only_qconfig = QConfig(
    activation=PlaceholderObserver, weight=default_float_qparams_observer
)
#: as above (qint8), with one weight scale per output channel
per_channel_dynamic_qconfig = QConfig(
    activation=default_dynamic_quant_observer,
    weight=default_per_channel_weight_observer,
)


_BACKENDS = ("fbgemm", "x86", "qnnpack", "onednn")


def get_default_qconfig(backend: str = "x86", version: int = 0) -> QConfig:
    """PyTorch's default post-training qconfig for ``backend``: histogram-observed activations
    (7 bits for x86/fbgemm) and per-channel symmetric qint8 weights (per-tensor for qnnpack).
    The quantized modules compute as PyTorch's x86/fbgemm kernels whichever backend is named."""
    if backend not in _BACKENDS:
        raise AssertionError(f"backend: {backend} not supported. backend must be one of {list(_BACKENDS)}")
    if version != 0:
        raise AssertionError(
            f"Version number: {version} in get_default_qconfig is not supported. Version number must be 0"
        )
    reduce_range = backend in ("fbgemm", "x86")
    weight = default_weight_observer if backend == "qnnpack" else default_per_channel_weight_observer
    return QConfig(activation=HistogramObserver.with_args(reduce_range=reduce_range), weight=weight)


def get_default_qat_qconfig(backend: str = "x86", version: int = 1) -> QConfig:
    """PyTorch's default quantization-aware-training qconfig for ``backend``: moving-average
    fake-quantized activations (7 bits for x86/fbgemm) and symmetric qint8 weights, per
    channel (per tensor for qnnpack). Version 1 (the default) uses the fused observer and
    fake quantizer (``FusedMovingAvgObsFakeQuantize``), version 0 ``FakeQuantize``."""
    if backend not in _BACKENDS:
        raise AssertionError(f"backend: {backend} not supported. backend must be one of {list(_BACKENDS)}")
    if version not in (0, 1):
        raise AssertionError(
            f"Version number: {version}in get_default_qat_qconfig is not supported. Version number must be 0 or 1"
        )
    fake_quant = FakeQuantize if version == 0 else FusedMovingAvgObsFakeQuantize
    activation = fake_quant.with_args(
        observer=MovingAverageMinMaxObserver,
        quant_min=0,
        quant_max=255,
        reduce_range=backend in ("fbgemm", "x86"),
    )
    if backend == "qnnpack":
        weight = default_weight_fake_quant if version == 0 else default_fused_wt_fake_quant
    else:
        weight = (
            default_per_channel_weight_fake_quant if version == 0 else default_fused_per_channel_wt_fake_quant
        )
    return QConfig(activation=activation, weight=weight)
