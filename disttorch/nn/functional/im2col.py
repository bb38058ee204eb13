"""``unfold`` (im2col: sliding local blocks as columns) and its adjoint ``fold``
(col2im: sum overlapping blocks back into an image), as one gather and one index-add
over precomputed flat positions."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor
from .padding import pad

__all__ = ["fold", "unfold"]


def _pair(v: Any, what: str) -> tuple:
    t = (int(v), int(v)) if isinstance(v, (int, np.integer)) else tuple(int(x) for x in v)
    if len(t) != 2:
        raise ValueError(f"{what} must be an int or a pair of ints, got {v}")
    return t


def _block_positions(padded: tuple, kernel: tuple, dilation: tuple, stride: tuple) -> tuple:
    """Flat positions ``(kH*kW, L)`` in the padded plane of every block element, and the
    number of blocks per dim."""
    blocks = []
    for size, k, d, s in zip(padded, kernel, dilation, stride):
        n = (size - d * (k - 1) - 1) // s + 1
        blocks.append(n)
    (_, wp), (kh, kw), (dh, dw), (sh, sw) = padded, kernel, dilation, stride
    rows = (np.arange(kh)[:, None] * dh)[:, None, :, None] + (np.arange(blocks[0]) * sh)[None, None, :, None]
    cols = (np.arange(kw)[None, :] * dw)[:, :, None, None] + (np.arange(blocks[1]) * sw)[None, None, None, :]
    flat = rows * wp + cols  # (kh, kw, bh, bw)
    return flat.reshape(kh * kw, -1), blocks


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:
    """Extract sliding blocks: ``(N, C, H, W)`` -> ``(N, C * kH * kW, L)`` (``L`` blocks),
    each column one block, channel-major as PyTorch. Unbatched ``(C, H, W)`` is accepted."""
    if input.ndim not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    kernel, dil = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    pads, stride = _pair(padding, "padding"), _pair(stride, "stride")
    if min(kernel) <= 0 or min(dil) <= 0 or min(stride) <= 0 or min(pads) < 0:
        raise RuntimeError(f"im2col: kernel_size, dilation and stride must be greater than zero and padding "
                           f"non-negative, but got kernel_size={list(kernel)} dilation={list(dil)} "
                           f"padding={list(pads)} stride={list(stride)}")
    n, c, h, w = x.shape
    padded = (h + 2 * pads[0], w + 2 * pads[1])
    pos, blocks = _block_positions(padded, kernel, dil, stride)
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size={list(kernel)}, "
                           f"dilation={list(dil)}, padding={list(pads)}, calculated shape of the array of "
                           f"sliding blocks as ({blocks[0]}, {blocks[1]}), but its components must be at "
                           f"least one.")
    if any(pads):
        x = pad(x, (pads[1], pads[1], pads[0], pads[0]))
    cols = x.reshape(n, c, -1)[:, :, pos]  # (N, C, kH*kW, L)
    out = cols.reshape(n, c * pos.shape[0], pos.shape[1])
    return out[0] if unbatched else out


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Tensor:
    """Sum sliding blocks back into an image: ``(N, C * kH * kW, L)`` -> ``(N, C, *output_size)``
    (overlapping entries add up); the adjoint of :func:`unfold`."""
    if input.ndim not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are "
                                  f"supported (got {input.ndim}D)")
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    out_hw = _pair(output_size, "output_size")
    kernel, dil = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    pads, stride = _pair(padding, "padding"), _pair(stride, "stride")
    n, ck, length = x.shape
    kk = kernel[0] * kernel[1]
    if ck % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of "
                           f"kernel_size, but got input.size(1)={ck} and kernel_size={kernel}")
    padded = (out_hw[0] + 2 * pads[0], out_hw[1] + 2 * pads[1])
    pos, blocks = _block_positions(padded, kernel, dil, stride)
    if blocks[0] * blocks[1] != length:
        raise RuntimeError(f"Given output_size={out_hw}, kernel_size={kernel}, dilation={dil}, "
                           f"padding={pads}, stride={stride}, expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
                           f"{blocks[0] * blocks[1]}, but got input.size(2)={length}.")
    c = ck // kk
    zeros = Tensor._make(np.zeros((n, c, padded[0] * padded[1]), dtype=x._data.dtype))
    img = zeros.index_add(2, Tensor._make(pos.ravel()), x.reshape(n, c, -1))
    img = img.reshape(n, c, *padded)
    img = img[:, :, pads[0]:pads[0] + out_hw[0], pads[1]:pads[1] + out_hw[1]]
    return img[0] if unbatched else img
