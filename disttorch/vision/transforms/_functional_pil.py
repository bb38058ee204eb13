"""The PIL side of ``torchvision.transforms.functional``. Pillow is optional for disttorch:
:func:`pil` imports it, and names it in the ImportError when it is missing."""

from __future__ import annotations

import numbers
import sys
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["image_fromarray", "is_pil_image", "pil"]


def pil() -> ModuleType:
    """``PIL.Image``, or an ImportError saying to install pillow."""
    try:
        from PIL import Image
    except ImportError as error:
        raise ImportError(
            "disttorch.vision (torchvision) needs pillow for PIL images: pip install pillow"
        ) from error
    return Image


def is_pil_image(img: Any) -> bool:
    """Whether ``img`` is a PIL image (False when pillow is not installed or not imported)."""
    image = sys.modules.get("PIL.Image")
    return image is not None and isinstance(img, image.Image)


def _check(img: Any) -> None:
    if not is_pil_image(img):
        raise TypeError(f"img should be PIL Image. Got {type(img)}")


def image_fromarray(array: np.ndarray, mode: str):
    """A PIL image of ``mode`` reading the bytes of ``array`` ``[H, W(, C)]`` as that mode's
    raw layout (what ``Image.fromarray(array, mode)`` did before pillow 11.3)."""
    array = np.ascontiguousarray(array)
    return pil().frombuffer(mode, (array.shape[1], array.shape[0]), array.tobytes(), "raw", mode, 0, 1)


def get_dimensions(img: Any) -> list[int]:
    _check_any(img)
    width, height = img.size
    return [len(img.getbands()), height, width]


def get_image_size(img: Any) -> list[int]:
    _check_any(img)
    return list(img.size)


def get_image_num_channels(img: Any) -> int:
    _check_any(img)
    return len(img.getbands())


def _check_any(img: Any) -> None:
    if not is_pil_image(img):
        raise TypeError(f"Unexpected type {type(img)}")


def hflip(img):
    _check(img)
    return img.transpose(pil().FLIP_LEFT_RIGHT)


def vflip(img):
    _check(img)
    return img.transpose(pil().FLIP_TOP_BOTTOM)


def _enhance(kind: str, img, factor: float):
    _check(img)
    from PIL import ImageEnhance

    return getattr(ImageEnhance, kind)(img).enhance(factor)


def adjust_brightness(img, brightness_factor: float):
    return _enhance("Brightness", img, brightness_factor)


def adjust_contrast(img, contrast_factor: float):
    return _enhance("Contrast", img, contrast_factor)


def adjust_saturation(img, saturation_factor: float):
    return _enhance("Color", img, saturation_factor)


def adjust_hue(img, hue_factor: float):
    """The hue channel of HSV shifted by ``hue_factor * 255`` (wrapping, as uint8)."""
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    _check(img)
    if img.mode in {"L", "1", "I", "F"}:
        return img
    h, s, v = img.convert("HSV").split()
    hue = np.array(h, dtype=np.uint8)
    hue += np.int32(hue_factor * 255).astype(np.uint8)
    return pil().merge("HSV", (image_fromarray(hue, "L"), s, v)).convert(img.mode)


def _parse_fill(fill, img, name: str = "fillcolor") -> dict:
    """``fill`` as pillow takes it for ``img``: one value per channel, ints unless mode F."""
    channels = get_image_num_channels(img)
    fill = 0 if fill is None else fill
    if isinstance(fill, (int, float)) and channels > 1:
        fill = (fill,) * channels
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = tuple(fill) * channels
        elif len(fill) != channels:
            raise ValueError(
                "The number of elements in 'fill' does not match the number of channels of the image "
                f"({len(fill)} != {channels})"
            )
        fill = tuple(fill)
    if img.mode != "F":
        fill = tuple(int(x) for x in fill) if isinstance(fill, tuple) else int(fill)
    return {name: fill}


def pad(img, padding, fill=0, padding_mode: str = "constant"):
    """As the tensor ``pad``, with pillow's ``ImageOps.expand`` for constant padding."""
    _check(img)
    if not isinstance(padding, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if fill is not None and not isinstance(fill, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate fill arg")
    if not isinstance(padding_mode, str):
        raise TypeError("Got inappropriate padding_mode arg")
    if isinstance(padding, (list, tuple)):
        if len(padding) not in (1, 2, 4):
            raise ValueError(
                f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple"
            )
        padding = padding[0] if len(padding) == 1 else tuple(padding)
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    palette = img.getpalette() if img.mode == "P" else None
    if padding_mode == "constant":
        from PIL import ImageOps

        out = ImageOps.expand(img, border=padding, **_parse_fill(fill, img, name="fill"))
    else:
        if isinstance(padding, int):
            amounts = [padding] * 4
        elif len(padding) == 2:
            amounts = [padding[0], padding[1], padding[0], padding[1]]
        else:
            amounts = list(padding)  # left, top, right, bottom
        cut = [max(-a, 0) for a in amounts]
        if any(cut):
            img = img.crop((cut[0], cut[1], img.width - cut[2], img.height - cut[3]))
        left, top, right, bottom = (max(a, 0) for a in amounts)
        array = np.asarray(img)
        widths = ((top, bottom), (left, right)) + (((0, 0),) if array.ndim == 3 else ())
        out = pil().fromarray(np.pad(array, widths, mode=padding_mode))
    if palette is not None:
        out.putpalette(palette)
    return out


def rotate(img, angle: float, interpolation: int = 0, expand: bool = False, center=None, fill=None):
    """``img`` turned ``angle`` degrees counter-clockwise by pillow, the corners filled."""
    _check(img)
    return img.rotate(angle, interpolation, expand, center, **_parse_fill(fill, img))


def crop(img, top: int, left: int, height: int, width: int):
    _check(img)
    return img.crop((left, top, left + width, top + height))


def resize(img, size: list[int], interpolation: int = 2):
    """``img`` resized to ``size`` ``[h, w]`` by pillow (``interpolation`` a pillow filter)."""
    _check(img)
    if not (isinstance(size, list) and len(size) == 2):
        raise TypeError(f"Got inappropriate size arg: {size}")
    return img.resize(tuple(size[::-1]), interpolation)


def to_grayscale(img, num_output_channels: int):
    """Pillow's ``L`` conversion, repeated into RGB for three channels."""
    _check(img)
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    gray = img.convert("L")
    if num_output_channels == 1:
        return gray
    return image_fromarray(np.repeat(np.array(gray, dtype=np.uint8)[:, :, None], 3, axis=2), "RGB")


def invert(img):
    _check(img)
    from PIL import ImageOps

    return ImageOps.invert(img)
