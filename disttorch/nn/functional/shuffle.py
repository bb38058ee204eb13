"""Rearranging channels and space: ``pixel_shuffle``, ``pixel_unshuffle`` and
``channel_shuffle`` (reshape and permute, so their gradients come from the graph)."""

from __future__ import annotations

from ..._tensor import Tensor
from ...autograd.function import named_node

__all__ = ["channel_shuffle", "native_channel_shuffle", "pixel_shuffle", "pixel_unshuffle"]


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearrange ``(*, C*r^2, H, W)`` into ``(*, C, H*r, W*r)`` (sub-pixel convolution)."""
    r = int(upscale_factor)
    shape = tuple(input.shape)
    if len(shape) < 3:
        raise RuntimeError(
            f"pixel_shuffle expects input to have at least 3 dimensions, but got input "
            f"with {len(shape)} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = shape
    if c % (r * r):
        raise RuntimeError(
            f"pixel_shuffle expects its input's 'channel' dimension to be divisible by "
            f"the square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return named_node(x.reshape(*lead, c // (r * r), h * r, w * r), "PixelShuffleBackward0")


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """Rearrange ``(*, C, H*r, W*r)`` into ``(*, C*r^2, H, W)``; the inverse of
    :func:`pixel_shuffle`."""
    r = int(downscale_factor)
    shape = tuple(input.shape)
    if len(shape) < 3:
        raise RuntimeError(
            f"pixel_unshuffle expects input to have at least 3 dimensions, but got input "
            f"with {len(shape)} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = shape
    if h % r or w % r:
        which, size = ("height", h) if h % r else ("width", w)
        raise RuntimeError(
            f"pixel_unshuffle expects {which} to be divisible by downscale_factor, but "
            f"input.size({-2 if h % r else -1})={size} is not divisible by {r}"
        )
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return named_node(x.reshape(*lead, c * r * r, h // r, w // r), "PixelUnshuffleBackward0")


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Split the channels (dim 1) into ``groups`` and interleave them (ShuffleNet)."""
    shape = tuple(input.shape)
    if len(shape) < 3:
        raise RuntimeError(
            f"channel_shuffle expects input to have at least 3 dimensions, but got input "
            f"with {len(shape)} dimension(s)"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    c = shape[1]
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    x = input.reshape(shape[0], groups, c // groups, *shape[2:])
    return x.transpose(1, 2).reshape(shape)


native_channel_shuffle = channel_shuffle
