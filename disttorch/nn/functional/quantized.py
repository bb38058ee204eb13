"""``torch.ao.nn.quantized.functional``'s functions: pooling and clamping of quantized
tensors, with the input's scale and zero point kept (the ``nn.functional`` functions take
quantized inputs themselves; these refuse a float one, as PyTorch's do)."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from . import activation, pooling

__all__ = ["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "hardtanh", "clamp"]


def _quantized(input: Any, what: str) -> Tensor:
    if not getattr(input, "is_quantized", False):
        raise ValueError(f"Input to 'quantized.{what}' must be quantized!")
    return input


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    """Max pooling of a quantized tensor."""
    _quantized(input, "max_pool2d")
    return pooling.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Average pooling of a quantized tensor (PyTorch's divisor rules and rounding)."""
    _quantized(input, "avg_pool2d")
    return pooling.avg_pool2d(
        input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Adaptive average pooling of a quantized tensor."""
    return pooling.adaptive_avg_pool2d(_quantized(input, "adaptive_avg_pool2d"), output_size)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """Values clamped to ``[min_val, max_val]`` (``relu6`` is ``hardtanh(x, 0, 6)``)."""
    return activation.hardtanh(_quantized(input, "hardtanh"), min_val, max_val)


def clamp(input: Tensor, min_: float, max_: float) -> Tensor:
    """Values clamped to ``[min_, max_]``."""
    return _quantized(input, "clamp").clamp(min_, max_)
