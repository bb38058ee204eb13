"""Fake quantization, the differentiable core of quantization-aware training:
``fake_quantize_per_tensor_affine`` and ``fake_quantize_per_channel_affine`` round a float
tensor to the values its quantized form would hold and return them as floats.

Forward, as PyTorch's kernel: ``q = zero_point + rint(x * (1 / scale))`` (the reciprocal in
float32), ``out = (clamp(q, quant_min, quant_max) - zero_point) * scale`` in float32.
Backward is the straight-through estimator: the gradient passes where ``q`` fell inside
``[quant_min, quant_max]`` and is zero where it was clamped.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import wrap_dim

__all__ = ["fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine"]

TENSOR_METHODS = ()


def _check_range(quant_min: int, quant_max: int, zero_points: np.ndarray) -> None:
    if quant_min > quant_max:
        raise RuntimeError("`quant_min` should be less than or         equal to `quant_max`.")
    if np.any((zero_points < quant_min) | (zero_points > quant_max)):
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")


def _fake_quantize(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray, qmin: int, qmax: int) -> tuple:
    """The fake-quantized values (in ``x``'s dtype) and the mask of unclamped elements."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        inv = np.float32(1.0) / scale.astype(np.float32)
        q = zero_point.astype(np.float64) + np.rint(
            x * inv.astype(x.dtype if x.dtype == np.float64 else np.float32)
        )
    mask = (q >= qmin) & (q <= qmax)
    out = (np.clip(q, qmin, qmax) - zero_point).astype(np.float32) * scale.astype(np.float32)
    return out.astype(x.dtype, copy=False), mask


def _float_input(input: Tensor, what: str) -> np.ndarray:
    if not isinstance(input, Tensor):
        raise TypeError(f"{what}(): argument 'input' must be Tensor, not {type(input).__name__}")
    x = input._data
    if x.dtype not in (np.float32, np.float64, np.float16):
        raise RuntimeError(
            f"{what}: expected a floating point input (float32, float64 or float16), got {input.dtype}"
        )
    return x


class FakeQuantizePerTensorAffineCachemask(Function):
    _raw = True

    @staticmethod
    def forward(ctx, input, scale, zero_point, quant_min, quant_max):
        x = _float_input(input, "fake_quantize_per_tensor_affine")
        if isinstance(scale, Tensor) or isinstance(zero_point, Tensor):
            ctx._node_name = "FakeQuantizePerTensorAffineCachemaskTensorQparamsBackward0"
        s = np.asarray(scale._data if isinstance(scale, Tensor) else scale, dtype=np.float64).reshape(())
        z = np.asarray(zero_point._data if isinstance(zero_point, Tensor) else zero_point).reshape(())
        z = z.astype(np.int64)
        _check_range(quant_min, quant_max, z)
        out, ctx.mask = _fake_quantize(x, s, z, quant_min, quant_max)
        return out

    @staticmethod
    def backward(ctx, g):
        return g * Tensor._make(ctx.mask), None, None, None, None


class FakeQuantizePerChannelAffineCachemask(Function):
    _raw = True

    @staticmethod
    def forward(ctx, input, scale, zero_point, axis, quant_min, quant_max):
        x = _float_input(input, "fake_quantize_per_channel_affine")
        z = zero_point._data
        if z.dtype.kind != "i" or z.dtype != np.int32:
            found = {np.dtype(np.int64): "Long", np.dtype(np.float32): "Float"}.get(z.dtype, str(z.dtype))
            raise RuntimeError(
                f"Zero-point must be Int32, Float or Half, found {found}"
                + (" (float zero points are not supported in disttorch)" if z.dtype.kind == "f" else "")
            )
        axis = wrap_dim(axis, x.ndim)
        if scale._data.shape != (x.shape[axis],) or z.shape != (x.shape[axis],):
            raise RuntimeError(
                f"dimensions of scale and zero-point are not consistent with input tensor: expected "
                f"{x.shape[axis]} values along axis {axis}, got scale {tuple(scale.shape)} and "
                f"zero_point {tuple(z.shape)}"
            )
        _check_range(quant_min, quant_max, z)
        shape = [1] * x.ndim
        shape[axis] = -1
        s = scale._data.astype(np.float64).reshape(shape)
        out, ctx.mask = _fake_quantize(x, s, z.astype(np.int64).reshape(shape), quant_min, quant_max)
        return out

    @staticmethod
    def backward(ctx, g):
        return g * Tensor._make(ctx.mask), None, None, None, None, None


def fake_quantize_per_tensor_affine(
    input: Tensor, scale: Any, zero_point: Any, quant_min: int, quant_max: int
) -> Tensor:
    """``input`` rounded to the values a per-tensor affine quantization with ``scale``,
    ``zero_point`` and integer range ``[quant_min, quant_max]`` represents, as floats;
    the gradient passes straight through inside the range."""
    return FakeQuantizePerTensorAffineCachemask.apply(
        input, scale, zero_point, int(quant_min), int(quant_max)
    )


def fake_quantize_per_channel_affine(
    input: Tensor, scale: Tensor, zero_point: Tensor, axis: int, quant_min: int, quant_max: int
) -> Tensor:
    """Per-channel fake quantization along ``axis``: ``scale`` (float) and ``zero_point``
    (int32) hold one value per index of that axis."""
    return FakeQuantizePerChannelAffineCachemask.apply(
        input, scale, zero_point, axis, int(quant_min), int(quant_max)
    )
