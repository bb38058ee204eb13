"""``rms_norm`` and ``local_response_norm``, composed from differentiable tensor ops."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ... import _dtype
from ..._memory_format import suggest_memory_format
from ..._tensor import Tensor
from ..._type_info import finfo
from .padding import pad
from .pooling import avg_pool2d, avg_pool3d

__all__ = ["local_response_norm", "rms_norm"]


def rms_norm(
    input: Tensor,
    normalized_shape: Sequence[int] | int,
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims:
    ``x / sqrt(mean(x^2) + eps) * weight``, in the dtype of ``input``. float16 and bfloat16
    inputs are computed in float32 (rounded once, at the end), and ``eps`` defaults to the
    machine epsilon of the dtype computed in."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if tuple(input.shape[input.ndim - k :]) != shape or k > input.ndim:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size{list(input.shape)}"
        )
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(
            f"Expected weight to be of same shape as normalized_shape, but got weight of "
            f"shape {list(weight.shape)} and normalized_shape = {list(shape)}"
        )
    low = input.dtype in (_dtype.float16, _dtype.bfloat16)
    x = input.float() if low else input
    if eps is None:
        eps = finfo(x.dtype).eps
    dims = tuple(range(input.ndim - k, input.ndim))
    out = x * ((x * x).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:
        out = out * weight.to(x.dtype)
    # laid out as PyTorch's: channels-last when ``input`` suggests it, else row-major
    out = out.contiguous(memory_format=suggest_memory_format(input._data))
    return out.to(input.dtype)


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """Normalise each element by its neighbours across channels:
    ``x / (k + alpha / size * sum_{c' near c} x_{c'}^2) ** beta`` over ``size`` channels
    (zero beyond the edges); input ``(N, C, *)`` with at least one spatial dim."""
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    if input.ndim == 3:
        div = pad(sq.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        n, c = input.shape[0], input.shape[1]
        div = sq.reshape(n, 1, c, input.shape[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).reshape(input.shape)
    return input / (div * alpha + k) ** beta


def _cross_map_window(channels: int, size: int) -> np.ndarray:
    """``(C, C)`` 0/1 matrix: row c marks the channels summed into channel c's scale by
    Lua Torch's CrossMapLRN2d (a running window whose left edge starts moving one step
    late, kept as PyTorch keeps it)."""
    pre_pad = int((size - 1) / 2 + 1)
    m = np.zeros((channels, channels))
    for c in range(channels):  # C x C bookkeeping, not per element
        m[c, : min(c + pre_pad, channels)] = 1
        if c > pre_pad:
            m[c, 1 : c - pre_pad + 1] = 0
    return m


def cross_map_lrn2d(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1
) -> Tensor:
    """Lua Torch's cross-channel LRN of 4-D input: ``x * (k + alpha / size * S)^-beta`` with
    ``S`` the windowed sum of squares over channels (the layer ``nn.CrossMapLRN2d``)."""
    if input.ndim != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
    window = Tensor._make(_cross_map_window(input.shape[1], size).T.astype(input._data.dtype))
    sums = (input * input).permute(0, 2, 3, 1).matmul(window).permute(0, 3, 1, 2)
    return input * (sums * (alpha / size) + k) ** (-beta)
