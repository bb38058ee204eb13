"""``torchvision.transforms.v2.functional`` on plain tensor and PIL images. Where v2 treats
such images as v1 does, these are v1's functions; ``resize`` resizes uint8 tensors as uint8
(bilinear, bicubic and nearest), as v2 does on CPUs; ``to_dtype`` and ``grayscale_to_rgb``
are v2's own."""

from __future__ import annotations

from disttorch._tensor import Tensor

from .. import _functional_tensor as F_t
from ..functional import (
    InterpolationMode,
    _compute_resized_output_size,
    _interpolation,
    center_crop,
    crop,
    hflip,
    normalize,
    pad,
    pil_to_tensor,
    to_pil_image,
    vflip,
)
from ..functional import resize as _resize_v1

__all__ = [
    "InterpolationMode",
    "center_crop",
    "crop",
    "grayscale_to_rgb",
    "hflip",
    "normalize",
    "pad",
    "pil_to_tensor",
    "resize",
    "to_dtype",
    "to_pil_image",
    "vflip",
]


def resize(
    inpt: Tensor,
    size: list[int] | None,
    interpolation: InterpolationMode | int = InterpolationMode.BILINEAR,
    max_size: int | None = None,
    antialias: bool | None = True,
) -> Tensor:
    """As v1's ``resize``, but a uint8 tensor is resized as uint8 (v2's CPU kernel)."""
    if not isinstance(inpt, Tensor):
        return _resize_v1(inpt, size, interpolation, max_size, antialias)
    mode = _interpolation(interpolation)
    size = [size] if isinstance(size, int) else size
    height, width = inpt.shape[-2:]
    new_size = _compute_resized_output_size((height, width), size, max_size, allow_size_none=True)
    if new_size == [height, width]:
        return inpt
    return F_t.resize(inpt, new_size, mode.value, antialias, native_uint8=True)


def to_dtype(inpt: Tensor, dtype=None, scale: bool = False) -> Tensor:
    """``inpt`` in ``dtype`` (float32 by default); with ``scale``, values rescaled between
    the dtypes' ranges as ``convert_image_dtype`` does."""
    from disttorch import float32

    dtype = float32 if dtype is None else dtype
    if inpt.dtype == dtype:
        return inpt
    if not scale:
        return inpt.to(dtype)
    return F_t.convert_image_dtype(inpt, dtype)


def grayscale_to_rgb(inpt: Tensor) -> Tensor:
    """A one-channel image repeated to three channels (three or more are returned as they are)."""
    if inpt.shape[-3] >= 3:
        return inpt
    return inpt.expand(*inpt.shape[:-3], 3, *inpt.shape[-2:]).clone()
