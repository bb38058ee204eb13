"""Pooling and activations of quantized tensors (PyTorch's quantized CPU kernels; also
``torch.ao.nn.quantized.functional``): the ``nn.functional`` functions hand a quantized
input here. Results keep the input's scale and zero point: max pooling picks integers,
average pooling sums ``q - zero_point`` over each window and rounds
``zero_point + sum / divisor`` half to even, as PyTorch's kernels do."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._qtensor import QuantizedTensor
from ..._tensor import Tensor
from ...kernels import quantize as qk
from . import pooling

__all__ = ["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "hardtanh", "clamp"]


def _quantized(input: Any, what: str) -> QuantizedTensor:
    if not getattr(input, "is_quantized", False):
        raise ValueError(f"Input to 'quantized.{what}' must be quantized!")
    if input._per_channel():
        raise RuntimeError(f"quantized {what} expects a per-tensor quantized input")
    return input


def max_pool2d(
    input: QuantizedTensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> QuantizedTensor:
    """Max pooling of the integers (max commutes with the monotone map back to reals)."""
    x = _quantized(input, "max_pool2d")
    if return_indices:
        raise NotImplementedError("return_indices is not yet implemented!")
    ints = Tensor._make(x._data.astype(np.float32))
    out = pooling.max_pool2d(ints, kernel_size, stride, padding, dilation, ceil_mode)
    return x._like(out._data.astype(x._data.dtype))


def avg_pool2d(
    input: QuantizedTensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> QuantizedTensor:
    """Average pooling with the input's qparams (PyTorch's divisor rules)."""
    x = _quantized(input, "avg_pool2d")
    centred = Tensor._make(x._data.astype(np.float64) - int(x._zero_point))
    mean = pooling.avg_pool2d(
        centred, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )
    return x._like(
        qk.average_requantized(mean._data, 1, int(x._zero_point), x._data.dtype)
    )  # sum/divisor exact


def adaptive_avg_pool2d(input: QuantizedTensor, output_size: Any) -> QuantizedTensor:
    """Adaptive average pooling with the input's qparams: exact integer window sums."""
    x = _quantized(input, "adaptive_avg_pool2d")
    data = x._data
    if data.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(data.shape)}")
    out_size = pooling._output_size(output_size, data.shape[-2:], 2)
    acc = data.astype(np.int64) - int(x._zero_point)
    counts = np.ones((1, 1), np.int64)
    for axis, size, out in ((-2, data.shape[-2], out_size[0]), (-1, data.shape[-1], out_size[1])):
        start, end = pooling._adaptive_ranges(size, out)
        running = np.cumsum(acc, axis=axis)
        zero = np.zeros_like(np.take(running, [0], axis=axis))
        running = np.concatenate([zero, running], axis=axis)
        acc = np.take(running, end, axis=axis) - np.take(running, start, axis=axis)
        counts = counts * ((end - start)[:, None] if axis == -2 else (end - start)[None, :])
    return x._like(qk.average_requantized(acc, counts, int(x._zero_point), data.dtype))


def hardtanh(
    input: QuantizedTensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> QuantizedTensor:
    """Values clamped to ``[min_val, max_val]`` (``relu6`` is ``hardtanh(x, 0, 6)``)."""
    return _quantized(input, "hardtanh").clamp(min_val, max_val)


def clamp(input: QuantizedTensor, min_: float, max_: float) -> QuantizedTensor:
    """Values clamped to ``[min_, max_]``."""
    return _quantized(input, "clamp").clamp(min_, max_)
