"""``torchvision.utils``: tile a batch of images into one grid (``make_grid``) and write it
as an image file (``save_image``, through pillow)."""

from __future__ import annotations

import math
import os
from typing import Any, BinaryIO

import disttorch as torch
from disttorch._tensor import Tensor

from .transforms._functional_pil import pil

__all__ = ["make_grid", "save_image"]


def _normalize_(t: Tensor, low: float, high: float) -> None:
    t.clamp_(min=low, max=high)
    t.sub_(low).div_(max(high - low, 1e-5))


def make_grid(
    tensor: Tensor | list[Tensor],
    nrow: int = 8,
    padding: int = 2,
    normalize: bool = False,
    value_range: tuple[int, int] | None = None,
    scale_each: bool = False,
    pad_value: float = 0.0,
) -> Tensor:
    """Images ``[B, C, H, W]`` (or a list of ``[C, H, W]``) tiled ``nrow`` to a row with
    ``padding`` pixels of ``pad_value`` between them; one channel is repeated to three.
    ``normalize`` shifts to [0, 1] by ``value_range`` (default: the min and max, of each
    image when ``scale_each``)."""
    if isinstance(tensor, list):
        for t in tensor:
            if not isinstance(t, Tensor):
                raise TypeError(f"tensor or list of tensors expected, got a list containing {type(t)}")
        tensor = torch.stack(tensor, dim=0)
    elif not isinstance(tensor, Tensor):
        raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        if tensor.size(0) == 1:
            tensor = torch.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = torch.cat((tensor, tensor, tensor), 1)
    if normalize is True:
        tensor = tensor.clone()
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")
        for t in tensor if scale_each is True else [tensor]:
            low, high = value_range if value_range is not None else (float(t.min()), float(t.max()))
            _normalize_(t, low, high)
    if tensor.size(0) == 1:
        return tensor.squeeze(0)
    count = tensor.size(0)
    columns = min(nrow, count)
    rows = int(math.ceil(float(count) / columns))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    grid = tensor.new_full((tensor.size(1), height * rows + padding, width * columns + padding), pad_value)
    for k in range(count):
        y, x = divmod(k, columns)
        grid.narrow(1, y * height + padding, height - padding).narrow(
            2, x * width + padding, width - padding
        ).copy_(tensor[k])
    return grid


def save_image(
    tensor: Tensor | list[Tensor], fp: str | os.PathLike | BinaryIO, format: str | None = None, **kwargs: Any
) -> None:
    """:func:`make_grid` of ``tensor`` (values in [0, 1]; ``kwargs`` go to it) saved as an
    8-bit image to ``fp`` (``format`` from the file name unless given)."""
    grid = make_grid(tensor, **kwargs)
    array = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to("cpu", torch.uint8).numpy()
    pil().fromarray(array).save(fp, format=format)
