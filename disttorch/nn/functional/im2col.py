"""``unfold`` (im2col: sliding local blocks as columns) and its adjoint ``fold``
(col2im: sum overlapping blocks back into an image): two Functions, each the other's
backward, so they differentiate to any order. ``unfold`` copies a strided window view of
the padded input; ``fold`` adds each kernel offset's columns into strided slices."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor
from ...autograd.function import Function
from ...kernels.windows import crop_index, pad_spatial, window_slices, windows
from ...ops.dtype_rules import refuse_kernel

__all__ = ["fold", "unfold"]


def _pair(v: Any, what: str) -> tuple:
    t = (int(v), int(v)) if isinstance(v, (int, np.integer)) else tuple(int(x) for x in v)
    if len(t) != 2:
        raise RuntimeError(f"It is expected {what} equals to 2, but got size {len(t)}")
    return t


def _geometry(kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> tuple:
    """The four pairs, checked in PyTorch's order (kernel, dilation, padding, stride)."""
    kernel, dil = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    pads, stride = _pair(padding, "padding"), _pair(stride, "stride")
    for values, ok, words in (
        (
            kernel,
            min(kernel) > 0,
            "kernel size should be greater than zero, but got kernel_height: {} kernel_width: {}",
        ),
        (
            dil,
            min(dil) > 0,
            "dilation should be greater than zero, but got dilation_height: {} dilation_width: {}",
        ),
        (pads, min(pads) >= 0, "padding should be non-negative, but got pad_height: {} pad_width: {}"),
        (
            stride,
            min(stride) > 0,
            "stride should be greater than zero, but got stride_height: {} stride_width: {}",
        ),
    ):
        if not ok:
            raise RuntimeError(words.format(*values))
    return kernel, dil, pads, stride


def _blocks(padded: tuple, kernel: tuple, dilation: tuple, stride: tuple) -> tuple:
    """Number of sliding blocks along each dim of the padded plane."""
    return tuple((size - d * (k - 1) - 1) // s + 1 for size, k, d, s in zip(padded, kernel, dilation, stride))


class Im2Col(Function):
    """``(N, C, H, W)`` -> ``(N, C * kH * kW, L)``; backward is :class:`Col2Im`."""

    _raw = True

    @staticmethod
    def forward(ctx, x, kernel, dilation, pads, stride, blocks):
        xp = pad_spatial(x._data, tuple((p, p) for p in pads))
        cols = np.ascontiguousarray(windows(xp, kernel, stride, dilation, blocks))
        ctx.geometry = (tuple(x._data.shape[2:]), kernel, dilation, pads, stride, blocks)
        n, c = x._data.shape[:2]
        return cols.reshape(n, c * kernel[0] * kernel[1], blocks[0] * blocks[1])

    @staticmethod
    def backward(ctx, g):
        return (Col2Im.apply(g, *ctx.geometry),) + (None,) * 5


class Col2Im(Function):
    """``(N, C * kH * kW, L)`` -> ``(N, C, *output_size)``, overlaps summed; backward is
    :class:`Im2Col`."""

    _raw = True

    @staticmethod
    def forward(ctx, cols, output_size, kernel, dilation, pads, stride, blocks):
        a = cols._data
        n, c = a.shape[0], a.shape[1] // (kernel[0] * kernel[1])
        a = a.reshape((n, c) + kernel + blocks)
        padded = (n, c) + tuple(o + 2 * p for o, p in zip(output_size, pads))
        img = np.zeros(padded, dtype=a.dtype)
        for k in np.ndindex(*kernel):
            img[window_slices(k, stride, dilation, blocks)] += a[(slice(None), slice(None)) + k]
        ctx.geometry = (kernel, dilation, pads, stride, blocks)
        return np.ascontiguousarray(img[crop_index(tuple(output_size), tuple((p, p) for p in pads))])

    @staticmethod
    def backward(ctx, g):
        return (Im2Col.apply(g, *ctx.geometry),) + (None,) * 6


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:
    """Extract sliding blocks: ``(N, C, H, W)`` -> ``(N, C * kH * kW, L)`` (``L`` blocks),
    each column one block, channel-major as PyTorch. Unbatched ``(C, H, W)`` is accepted."""
    kernel, dil, pads, stride = _geometry(kernel_size, dilation, padding, stride)
    if 0 < input.ndim < 3:  # (PyTorch's kernel reads dim 2 first)
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-input.ndim}, {input.ndim - 1}], but got 2)"
        )
    if input.ndim not in (3, 4):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions "
            f"for input, but got: {list(input.shape)}"
        )
    refuse_kernel("im2col_out_cpu", input, "iu")  # (bool passes, as PyTorch's)
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    h, w = x.shape[2], x.shape[3]
    blocks = _blocks((h + 2 * pads[0], w + 2 * pads[1]), kernel, dil, stride)
    if min(blocks) < 1:
        raise RuntimeError(
            f"Given input with spatial size ({h}, {w}), kernel_size={tuple(kernel)}, "
            f"dilation={tuple(dil)}, padding={tuple(pads)}, calculated shape of the array of "
            f"sliding blocks as ({blocks[0]}, {blocks[1]}), but its components must be at "
            f"least one."
        )
    out = Im2Col.apply(x, kernel, dil, pads, stride, blocks)
    return out[0] if unbatched else out


def fold(
    input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
) -> Tensor:
    """Sum sliding blocks back into an image: ``(N, C * kH * kW, L)`` -> ``(N, C, *output_size)``
    (overlapping entries add up); the adjoint of :func:`unfold`."""
    out_hw = _pair(output_size, "output_size")
    kernel, dil, pads, stride = _geometry(kernel_size, dilation, padding, stride)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions "
            f"for input, but got: {list(input.shape)}"
        )
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    ck, length = x.shape[1], x.shape[2]
    kk = kernel[0] * kernel[1]
    if ck % kk:
        raise RuntimeError(
            f"Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={ck} and kernel_size={kernel}"
        )
    blocks = _blocks((out_hw[0] + 2 * pads[0], out_hw[1] + 2 * pads[1]), kernel, dil, stride)
    if blocks[0] * blocks[1] != length:
        raise RuntimeError(
            f"Given output_size={out_hw}, kernel_size={kernel}, dilation={dil}, "
            f"padding={pads}, stride={stride}, expected size of input's dimension 2 to "
            f"match the calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
            f"{blocks[0] * blocks[1]}, but got input.size(2)={length}."
        )
    img = Col2Im.apply(x, out_hw, kernel, dil, pads, stride, blocks)
    return img[0] if unbatched else img
