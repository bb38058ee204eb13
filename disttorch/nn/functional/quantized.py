"""Pooling and activations of quantized tensors (PyTorch's quantized CPU kernels): the
``nn.functional`` functions hand a quantized input here. Results keep the input's scale and
zero point: max pooling picks integers, average pooling sums ``q - zero_point`` over each
window and rounds ``zero_point + sum / divisor`` half to even, as PyTorch's kernels do."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._qtensor import QuantizedTensor
from ..._tensor import Tensor
from ...kernels import quantize as qk
from . import pooling

__all__ = ["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "hardtanh"]


def _per_tensor(input: Any, what: str) -> QuantizedTensor:
    if input.qscheme().name.startswith("per_channel"):  # per-channel activations: not in PyTorch either
        raise RuntimeError(f"quantized {what} expects a per-tensor quantized input")
    return input


def max_pool2d(input: QuantizedTensor, *args: Any, return_indices: bool = False, **kwargs: Any) -> Any:
    """Max pooling of the integers (max commutes with the monotone map back to reals)."""
    if return_indices or (len(args) > 5 and args[5]):
        raise NotImplementedError("quantized max_pool2d does not return indices (as in PyTorch)")
    x = _per_tensor(input, "max_pool2d")
    out = pooling.max_pool2d(Tensor._make(x._data.astype(np.float32)), *args, **kwargs)
    return x._like(out._data.astype(x._data.dtype))


def avg_pool2d(input: QuantizedTensor, *args: Any, **kwargs: Any) -> QuantizedTensor:
    """Average pooling with the input's qparams (PyTorch's divisor rules)."""
    x = _per_tensor(input, "avg_pool2d")
    centred = Tensor._make(x._data.astype(np.float64) - int(x._zero_point))
    mean = pooling.avg_pool2d(centred, *args, **kwargs)._data  # sum / divisor, rounded once
    return x._like(qk.average_requantized(mean, 1, int(x._zero_point), x._data.dtype))


def adaptive_avg_pool2d(input: QuantizedTensor, output_size: Any) -> QuantizedTensor:
    """Adaptive average pooling with the input's qparams: exact integer window sums."""
    x = _per_tensor(input, "adaptive_avg_pool2d")
    data = x._data
    if data.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(data.shape)}")
    out_size = pooling._output_size(output_size, data.shape[-2:], 2)
    acc = data.astype(np.int64) - int(x._zero_point)
    counts = np.ones((1, 1), np.int64)
    for axis, (size, out) in zip((-2, -1), zip(data.shape[-2:], out_size)):
        start, end = pooling._adaptive_ranges(size, out)
        padded = np.concatenate(
            [np.zeros_like(np.take(acc, [0], axis=axis)), np.cumsum(acc, axis=axis)], axis=axis
        )
        acc = np.take(padded, end, axis=axis) - np.take(padded, start, axis=axis)
        counts = counts * ((end - start)[:, None] if axis == -2 else (end - start)[None, :])
    return x._like(qk.average_requantized(acc, counts, int(x._zero_point), data.dtype))


def hardtanh(input: QuantizedTensor, min_val: float = -1.0, max_val: float = 1.0) -> QuantizedTensor:
    """Values clamped to ``[min_val, max_val]`` (``relu6`` is ``hardtanh(x, 0, 6)``)."""
    return input.clamp(min_val, max_val)
