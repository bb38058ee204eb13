"""``torchvision.io``, for images only: read a file's bytes, decode PNG/JPEG/... images into
uint8 tensors ``[C, H, W]`` (through pillow). Video reading and image encoding are not
provided."""

from __future__ import annotations

import io
import os
from enum import Enum

import numpy as np

import disttorch as torch
from disttorch._tensor import Tensor

from .transforms._functional_pil import pil

__all__ = ["ImageReadMode", "decode_image", "read_file", "read_image"]


class ImageReadMode(Enum):
    """The channels a decoded image is converted to (``UNCHANGED`` keeps the file's)."""

    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4


_PIL_MODES = {
    ImageReadMode.GRAY: "L",
    ImageReadMode.GRAY_ALPHA: "LA",
    ImageReadMode.RGB: "RGB",
    ImageReadMode.RGB_ALPHA: "RGBA",
}


def read_file(path: str | os.PathLike) -> Tensor:
    """The bytes of a file as a 1-D uint8 tensor."""
    with open(path, "rb") as f:
        return torch.from_numpy(np.frombuffer(f.read(), dtype=np.uint8).copy())


def decode_image(
    input: Tensor | str | os.PathLike,
    mode: ImageReadMode | str = ImageReadMode.UNCHANGED,
    apply_exif_orientation: bool = False,
) -> Tensor:
    """An encoded image (a 1-D uint8 tensor of its bytes, or a path) as a uint8 tensor
    ``[C, H, W]`` in ``mode`` (``ImageReadMode`` or its name)."""
    if not isinstance(input, Tensor):
        input = read_file(input)
    if isinstance(mode, str):
        mode = ImageReadMode[mode.upper()]
    if input.dtype != torch.uint8 or input.dim() != 1:
        raise RuntimeError(
            f"Expected a 1-D uint8 tensor of encoded bytes, got {input.dtype} of shape {tuple(input.shape)}"
        )
    image = pil().open(io.BytesIO(input.numpy().tobytes()))
    if apply_exif_orientation:
        from PIL import ImageOps

        image = ImageOps.exif_transpose(image)
    if mode is not ImageReadMode.UNCHANGED:
        image = image.convert(_PIL_MODES[mode])
    elif image.mode not in ("L", "LA", "RGB", "RGBA"):
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    array = np.array(image, dtype=np.uint8)
    array = array[:, :, None] if array.ndim == 2 else array
    return torch.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1)))


def read_image(
    path: str | os.PathLike,
    mode: ImageReadMode = ImageReadMode.UNCHANGED,
    apply_exif_orientation: bool = False,
) -> Tensor:
    """:func:`decode_image` of the file at ``path``."""
    return decode_image(read_file(path), mode, apply_exif_orientation)
