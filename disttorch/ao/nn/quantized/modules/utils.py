"""Weight quantization shared by the quantized modules: a float weight and the observer
that watched it give a per-tensor or per-channel qint8 tensor; float16 weights of dynamic
layers are rounded as fbgemm packs them."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..... import _dtype, _qscheme
from ....._quantize import quantize_per_channel, quantize_per_tensor
from ....._tensor import Tensor

__all__ = ["fp16_weight", "quantize_weight", "record_version"]

_FP16_MAX = float(np.finfo(np.float16).max)

_PER_TENSOR = (_qscheme.per_tensor_affine, _qscheme.per_tensor_symmetric)
_PER_CHANNEL = (_qscheme.per_channel_affine, _qscheme.per_channel_symmetric)


def quantize_weight(weight: Tensor, observer: Any) -> Tensor:
    """``weight`` quantized with the scale(s) and zero point(s) ``observer`` chose."""
    scale, zero_point = observer.calculate_qparams()
    if observer.qscheme in _PER_TENSOR:
        return quantize_per_tensor(weight, float(scale.item()), int(zero_point.item()), observer.dtype)
    if observer.qscheme in _PER_CHANNEL:
        return quantize_per_channel(
            weight, scale.to(_dtype.float64), zero_point.to(_dtype.int64), observer.ch_axis, observer.dtype
        )
    raise ValueError(f"Unsupported qscheme: {observer.qscheme}")


def fp16_weight(weight: Tensor) -> Tensor:
    """``weight`` as fbgemm packs it for float16 layers: clamped to float16's range (with a
    warning when that changes it), rounded to float16 (to even), kept as float32."""
    w = weight.detach().float().numpy()
    if np.abs(w).max(initial=0.0) > _FP16_MAX:
        warnings.warn(
            "Your model has weights that are outside the range of fp16 (-65504, 65504): they are saturated to it",
            stacklevel=3,
        )
    return Tensor._make(np.clip(w, -_FP16_MAX, _FP16_MAX).astype(np.float16).astype(np.float32))


def record_version(destination: dict, prefix: str, version: int) -> None:
    """Note a module's state-dict format version in ``destination._metadata`` as PyTorch's
    ``state_dict`` does, so PyTorch's quantized modules load the entries as this format."""
    metadata = getattr(destination, "_metadata", None)
    if metadata is None:
        metadata = {}
        try:
            destination._metadata = metadata
        except AttributeError:  # a plain dict cannot carry it
            return
    metadata[prefix[:-1]] = {"version": version}
