"""``quantize_per_tensor``, ``quantize_per_channel`` and ``dequantize``: float32 tensors to
quantized ones (:class:`~disttorch._qtensor.QuantizedTensor`) and back, with PyTorch's checks
and messages."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import _dtype, _qscheme
from ._qtensor import QuantizedTensor
from ._tensor import Tensor
from .kernels import quantize as qk

__all__ = [
    "quantize_per_tensor",
    "quantize_per_channel",
    "dequantize",
    "int_repr",
    "q_scale",
    "q_zero_point",
    "q_per_channel_scales",
    "q_per_channel_zero_points",
    "q_per_channel_axis",
]

_warned = [False]


def _deprecation_once() -> None:
    """PyTorch 2.13 warns once per process that these creation functions are deprecated."""
    if not _warned[0]:
        _warned[0] = True
        warnings.warn(
            "torch.quantize_per_tensor, torch.quantize_per_channel and other quantized tensor "
            "creation functions that produce tensors with dtype torch.quint8, torch.qint8, and "
            "torch.qint32 are deprecated and will be removed in a future PyTorch release. Please see "
            "https://github.com/pytorch/pytorch/issues/184982 for more information. (Triggered "
            "internally at /__w/pytorch/pytorch/aten/src/ATen/quantized/Quantizer.cpp:111.)",
            UserWarning,
            stacklevel=3,
        )


def _check_input(input: Any, dtype: Any) -> np.ndarray:
    if not isinstance(input, Tensor):
        raise TypeError(f"quantize: input must be a Tensor, not {type(input).__name__}")
    if input.is_quantized:
        raise NotImplementedError(
            "Could not run 'aten::quantize_per_tensor' with arguments from the 'QuantizedCPU' "
            "backend (the input is quantized already: dequantize() it first)"
        )
    if dtype not in _dtype.QUANTIZED:
        name = dtype.scalar_name if isinstance(dtype, _dtype.dtype) else repr(dtype)
        raise RuntimeError(f"ScalarType {name} is not supported in new_qtensor.")
    if input._data.dtype != np.float32:
        raise RuntimeError(f"Quantize only works on Float Tensor, got {input.dtype.scalar_name}")
    return input._data


def _number(value: Any) -> Any:
    return value.item() if isinstance(value, Tensor) else value


def quantize_per_tensor(input: Tensor, scale: float, zero_point: int, dtype: _dtype.dtype) -> QuantizedTensor:
    """``input`` (float32) quantized with one ``scale`` and ``zero_point``:
    ``clamp(round(input / scale) + zero_point)`` in ``dtype`` (``quint8``, ``qint8``,
    ``qint32``), ties rounded to even. A list of tensors gives a list."""
    if isinstance(input, (list, tuple)):
        return [quantize_per_tensor(t, s, z, dtype) for t, s, z in zip(input, scale, zero_point, strict=True)]
    arr = _check_input(input, dtype)
    _deprecation_once()
    scale, zero_point = float(_number(scale)), int(_number(zero_point))
    qmin, qmax = qk.qrange(dtype.numpy)
    if zero_point > qmax:
        raise RuntimeError(f"quantize_tensor_per_tensor_affine zero_point {zero_point} is above upper bound.")
    if zero_point < qmin:
        raise RuntimeError(f"quantize_tensor_per_tensor_affine zero_point {zero_point} is below lower bound.")
    q = qk.quantize(arr, scale, zero_point, dtype.numpy)
    return QuantizedTensor._build(q, dtype, _qscheme.per_tensor_affine, scale, zero_point)


def quantize_per_channel(
    input: Tensor, scales: Tensor, zero_points: Tensor, axis: int, dtype: _dtype.dtype
) -> QuantizedTensor:
    """``input`` (float32) quantized with one scale and zero point per index of ``axis``
    (``scales``: 1-d floats, ``zero_points``: 1-d integers, as long as that axis; float zero
    points give the ``per_channel_affine_float_qparams`` scheme, quint8 only)."""
    arr = _check_input(input, dtype)
    _deprecation_once()
    if not 0 <= axis < arr.ndim:
        raise RuntimeError(
            "Channel axis out of range in per channel affine quantization. "
            f"Got: {axis}Expected: [0, {arr.ndim})"
        )
    s = np.asarray(scales._data if isinstance(scales, Tensor) else scales, dtype=np.float64).reshape(-1)
    zp_in = zero_points._data if isinstance(zero_points, Tensor) else np.asarray(zero_points)
    if s.size != zp_in.size:
        raise RuntimeError("number of elements in scales and zero_points must match")
    if s.size != arr.shape[axis]:
        raise RuntimeError(
            f"length of scales must equal to channel, expected {arr.shape[axis]} got, {s.size}"
        )
    if zp_in.dtype.kind == "f":  # per_channel_affine_float_qparams: x ~ (q - zero_point) * scale
        if dtype is not _dtype.quint8:
            raise RuntimeError(
                f"quantize_per_channel with float zero points quantizes to quint8, got {dtype}"
            )
        zp = zp_in.astype(np.float32).reshape(-1)
        q = qk.quantize(arr, s, zp.astype(np.float64), dtype.numpy, axis)
        return QuantizedTensor._build(
            q, dtype, _qscheme.per_channel_affine_float_qparams, s.astype(np.float32), zp, axis
        )
    zp = zp_in.astype(np.int64).reshape(-1)
    qmin, qmax = qk.qrange(dtype.numpy)
    for z in zp.tolist():
        if not qmin <= z <= qmax:
            side = "above upper" if z > qmax else "below lower"
            raise RuntimeError(f"quantize_tensor_per_channel_affine zero_point {z} is {side} bound.")
    q = qk.quantize(arr, s, zp, dtype.numpy, axis)
    return QuantizedTensor._build(q, dtype, _qscheme.per_channel_affine, s, zp, axis)


def dequantize(input: Tensor | list) -> Tensor | list:
    """The float32 values of a quantized tensor (a float tensor is returned as it is; a list
    gives a list)."""
    if isinstance(input, (list, tuple)):
        return [dequantize(t) for t in input]
    return input.dequantize()


def int_repr(input: Tensor) -> Tensor:
    """``input.int_repr()``: a quantized tensor's integer representation."""
    return input.int_repr()


def q_scale(input: Tensor) -> float:
    """``input.q_scale()``: a per-tensor quantized tensor's scale."""
    return input.q_scale()


def q_zero_point(input: Tensor) -> int:
    """``input.q_zero_point()``: a per-tensor quantized tensor's zero point."""
    return input.q_zero_point()


def q_per_channel_scales(input: Tensor) -> Tensor:
    """``input.q_per_channel_scales()``: a per-channel quantized tensor's scales."""
    return input.q_per_channel_scales()


def q_per_channel_zero_points(input: Tensor) -> Tensor:
    """``input.q_per_channel_zero_points()``: a per-channel quantized tensor's zero points."""
    return input.q_per_channel_zero_points()


def q_per_channel_axis(input: Tensor) -> int:
    """``input.q_per_channel_axis()``: a per-channel quantized tensor's axis."""
    return input.q_per_channel_axis()
