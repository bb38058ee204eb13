"""``torchvision.transforms.functional``: each function takes a tensor image ``[..., C, H, W]``
or a PIL image and answers in kind (``_functional_tensor`` and ``_functional_pil`` hold the
two sides). Pillow is needed only for PIL images."""

from __future__ import annotations

import math
import numbers
import sys
import warnings
from enum import Enum
from typing import Any

import numpy as np

import disttorch as torch
from disttorch._tensor import Tensor

from . import _functional_pil as F_pil
from . import _functional_tensor as F_t

__all__ = [
    "rotate",
    "InterpolationMode",
    "adjust_brightness",
    "adjust_contrast",
    "adjust_gamma",
    "adjust_hue",
    "adjust_saturation",
    "center_crop",
    "convert_image_dtype",
    "crop",
    "erase",
    "five_crop",
    "gaussian_blur",
    "get_dimensions",
    "get_image_num_channels",
    "get_image_size",
    "hflip",
    "invert",
    "normalize",
    "pad",
    "pil_to_tensor",
    "resize",
    "resized_crop",
    "rgb_to_grayscale",
    "ten_crop",
    "to_grayscale",
    "to_pil_image",
    "to_tensor",
    "vflip",
]


class InterpolationMode(Enum):
    """How resizing samples the image (the values are the modes of ``interpolate``)."""

    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    # PIL only
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


#: InterpolationMode -> pillow's resampling filter number
pil_modes_mapping = {
    InterpolationMode.NEAREST: 0,
    InterpolationMode.BILINEAR: 2,
    InterpolationMode.BICUBIC: 3,
    InterpolationMode.NEAREST_EXACT: 0,
    InterpolationMode.BOX: 4,
    InterpolationMode.HAMMING: 5,
    InterpolationMode.LANCZOS: 1,
}
_FROM_PIL = {
    number: mode for mode, number in pil_modes_mapping.items() if mode is not InterpolationMode.NEAREST_EXACT
}


def _interpolation_modes_from_int(i: int) -> InterpolationMode:
    return _FROM_PIL[i]


def _interpolation(interpolation: InterpolationMode | int) -> InterpolationMode:
    if isinstance(interpolation, int):
        return _interpolation_modes_from_int(interpolation)
    if not isinstance(interpolation, InterpolationMode):
        raise TypeError(
            "Argument interpolation should be a InterpolationMode or a corresponding Pillow integer constant"
        )
    return interpolation


_is_pil_image = F_pil.is_pil_image


def _side(img: Any):
    """The module handling ``img``: the tensor side for tensors, the PIL side otherwise."""
    return F_t if isinstance(img, Tensor) else F_pil


def get_dimensions(img: Tensor) -> list[int]:
    """``[channels, height, width]`` of a tensor or PIL image."""
    return _side(img).get_dimensions(img)


def get_image_size(img: Tensor) -> list[int]:
    """``[width, height]`` of a tensor or PIL image."""
    return _side(img).get_image_size(img)


def get_image_num_channels(img: Tensor) -> int:
    return _side(img).get_image_num_channels(img)


def _pil_mode_dtype(mode: str):
    return {"I": np.int32, "I;16" if sys.byteorder == "little" else "I;16B": np.int16, "F": np.float32}.get(
        mode, np.uint8
    )


def to_tensor(pic: Any) -> Tensor:
    """A PIL image or ndarray ``HxWxC`` as a tensor ``CxHxW``; 8-bit values become floats in
    [0, 1] (in the default dtype), other dtypes keep their values."""
    is_array = isinstance(pic, np.ndarray)
    if not (F_pil.is_pil_image(pic) or is_array):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if is_array and pic.ndim not in (2, 3):
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    if is_array:
        img = torch.from_numpy((pic[:, :, None] if pic.ndim == 2 else pic).transpose((2, 0, 1))).contiguous()
    else:
        img = torch.from_numpy(np.array(pic, _pil_mode_dtype(pic.mode), copy=True))
        if pic.mode == "1":
            img = 255 * img
        img = (
            img.view(pic.size[1], pic.size[0], F_pil.get_image_num_channels(pic))
            .permute((2, 0, 1))
            .contiguous()
        )
    if img.dtype == torch.uint8:
        return img.to(dtype=torch.get_default_dtype()).div(255)
    return img


def pil_to_tensor(pic: Any) -> Tensor:
    """A PIL image as a tensor ``CxHxW`` of its own values and dtype (no scaling)."""
    if not F_pil.is_pil_image(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    img = torch.as_tensor(np.array(pic, copy=True))
    return img.view(pic.size[1], pic.size[0], F_pil.get_image_num_channels(pic)).permute((2, 0, 1))


def convert_image_dtype(image: Tensor, dtype=torch.float) -> Tensor:
    """``image`` in ``dtype``, values rescaled (``[0, 1]`` for floats, ``[0, max]`` for integers)."""
    if not isinstance(image, Tensor):
        raise TypeError("Input img should be Tensor Image")
    return F_t.convert_image_dtype(image, dtype)


_MODES_BY_CHANNELS = {2: ["LA"], 3: ["RGB", "YCbCr", "HSV"], 4: ["RGBA", "CMYK", "RGBX"]}


def to_pil_image(pic: Any, mode: str | None = None):
    """A tensor ``CxHxW`` or ndarray ``HxWxC`` as a PIL image; floats are scaled by 255 to
    8 bits (unless ``mode`` is ``'F'``). ``mode`` defaults from the channels and dtype."""
    if isinstance(pic, Tensor):
        pic = (pic.permute((1, 2, 0)) if pic.ndim == 3 else pic).numpy(force=True)
    elif not isinstance(pic, np.ndarray):
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if pic.ndim == 2:
        pic = np.expand_dims(pic, 2)
    if pic.ndim != 3:
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    if pic.shape[-1] > 4:
        raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-1]} channels.")
    array = pic
    if np.issubdtype(array.dtype, np.floating) and mode != "F":
        array = (array * 255).astype(np.uint8)
    channels = array.shape[2]
    if channels == 1:
        array = array[:, :, 0]
        expected = {
            np.dtype(np.uint8): "L",
            np.dtype(np.int16): "I;16" if sys.byteorder == "little" else "I;16B",
            np.dtype(np.int32): "I",
            np.dtype(np.float32): "F",
        }.get(array.dtype)
        if mode is not None and mode != expected:
            raise ValueError(
                f"Incorrect mode ({mode}) supplied for input type {np.dtype}. Should be {expected}"
            )
        mode = expected
    else:
        permitted = _MODES_BY_CHANNELS[channels]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for {channels}D inputs")
        if mode is None and array.dtype == np.uint8:
            mode = permitted[0]
    if mode is None:
        raise TypeError(f"Input type {array.dtype} is not supported")
    return F_pil.image_fromarray(array, mode)


def normalize(tensor: Tensor, mean: list[float], std: list[float], inplace: bool = False) -> Tensor:
    """``(tensor - mean) / std`` per channel of a float tensor image."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    return F_t.normalize(tensor, mean=mean, std=std, inplace=inplace)


def _compute_resized_output_size(
    image_size: tuple[int, int],
    size: list[int] | None,
    max_size: int | None = None,
    allow_size_none: bool = False,
) -> list[int]:
    """``[h, w]`` after resizing: ``size`` of one number sets the shorter edge (keeping the
    aspect ratio, the longer edge at most ``max_size``), two numbers set both."""
    h, w = image_size
    short, long = (w, h) if w <= h else (h, w)
    if size is None:
        if not allow_size_none:
            raise ValueError("size must be given (it may be None only where allow_size_none)")
        if not isinstance(max_size, int):
            raise ValueError(f"max_size must be an integer when size is None, but got {max_size} instead.")
        new_short, new_long = int(max_size * short / long), max_size
    elif len(size) == 1:
        requested = size if isinstance(size, int) else size[0]
        new_short, new_long = requested, int(requested * long / short)
        if max_size is not None:
            if max_size <= requested:
                raise ValueError(
                    f"max_size = {max_size} must be strictly greater than the requested "
                    f"size for the smaller edge size = {size}"
                )
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
    else:
        return [size[0], size[1]]
    new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    return [new_h, new_w]


def resize(
    img: Tensor,
    size: list[int],
    interpolation: InterpolationMode = InterpolationMode.BILINEAR,
    max_size: int | None = None,
    antialias: bool | None = True,
) -> Tensor:
    """``img`` resized to ``size`` (see :func:`_compute_resized_output_size`); the same
    image when the size does not change. PIL images always antialias."""
    interpolation = _interpolation(interpolation)
    if isinstance(size, (list, tuple)):
        if len(size) not in (1, 2):
            raise ValueError(
                f"Size must be an int or a 1 or 2 element tuple/list, not a {len(size)} element tuple/list"
            )
        if max_size is not None and len(size) != 1:
            raise ValueError(
                "max_size should only be passed if size specifies the length of the smaller edge, "
                "i.e. size should be an int or a sequence of length 1 in torchscript mode."
            )
    _, height, width = get_dimensions(img)
    output_size = _compute_resized_output_size(
        (height, width), [size] if isinstance(size, int) else size, max_size
    )
    if [height, width] == output_size:
        return img
    if not isinstance(img, Tensor):
        if antialias is False:
            warnings.warn(
                "Anti-alias option is always applied for PIL Image input. Argument antialias is ignored.",
                stacklevel=2,
            )
        return F_pil.resize(img, size=output_size, interpolation=pil_modes_mapping[interpolation])
    return F_t.resize(img, size=output_size, interpolation=interpolation.value, antialias=antialias)


def pad(img: Tensor, padding: list[int], fill: int | float = 0, padding_mode: str = "constant") -> Tensor:
    """Pad the borders by ``padding`` (an int, ``[lr, tb]`` or ``[l, t, r, b]``) with
    ``padding_mode`` ``constant`` (``fill``), ``edge``, ``reflect`` or ``symmetric``."""
    return _side(img).pad(img, padding=padding, fill=fill, padding_mode=padding_mode)


def crop(img: Tensor, top: int, left: int, height: int, width: int) -> Tensor:
    """The ``height x width`` window at ``(top, left)``, zero-padded where it leaves the image."""
    return _side(img).crop(img, top, left, height, width)


def _pair(size: Any) -> tuple[int, int]:
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, (tuple, list)) and len(size) == 1:
        return size[0], size[0]
    return size


def center_crop(img: Tensor, output_size: list[int]) -> Tensor:
    """The centred ``output_size`` window (zero-padded when larger than the image)."""
    crop_height, crop_width = _pair(output_size)
    _, height, width = get_dimensions(img)
    if crop_width > width or crop_height > height:
        padding = [
            (crop_width - width) // 2 if crop_width > width else 0,
            (crop_height - height) // 2 if crop_height > height else 0,
            (crop_width - width + 1) // 2 if crop_width > width else 0,
            (crop_height - height + 1) // 2 if crop_height > height else 0,
        ]
        img = pad(img, padding, fill=0)
        _, height, width = get_dimensions(img)
        if crop_width == width and crop_height == height:
            return img
    top = int(round((height - crop_height) / 2.0))
    left = int(round((width - crop_width) / 2.0))
    return crop(img, top, left, crop_height, crop_width)


def resized_crop(
    img: Tensor,
    top: int,
    left: int,
    height: int,
    width: int,
    size: list[int],
    interpolation: InterpolationMode = InterpolationMode.BILINEAR,
    antialias: bool | None = True,
) -> Tensor:
    """:func:`crop`, then :func:`resize` to ``size``."""
    return resize(crop(img, top, left, height, width), size, interpolation, antialias=antialias)


def _inverse_rotation(center: list[float], angle: float) -> list[float]:
    """The inverse of turning ``angle`` degrees counter-clockwise about ``center`` (pixels from
    the image centre), as the 2x3 matrix ``[a, b, c, d, e, f]`` in pixel units."""
    rot = math.radians(-angle)
    cx, cy = center
    m = [math.cos(rot), math.sin(rot), 0.0, -math.sin(rot), math.cos(rot), 0.0]
    m[2] += m[0] * -cx + m[1] * -cy + cx
    m[5] += m[3] * -cx + m[4] * -cy + cy
    return m


def rotate(
    img: Tensor,
    angle: float,
    interpolation: InterpolationMode | int = InterpolationMode.NEAREST,
    expand: bool = False,
    center: list[int] | None = None,
    fill: list[float] | None = None,
) -> Tensor:
    """``img`` turned ``angle`` degrees counter-clockwise about ``center`` (default: its
    centre); ``expand`` grows the output to hold the whole image; ``fill`` the uncovered area."""
    interpolation = _interpolation(interpolation)
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    if not isinstance(img, Tensor):
        return F_pil.rotate(img, angle, pil_modes_mapping[interpolation], expand, center, fill)
    center_f = [0.0, 0.0]
    if center is not None:
        _, height, width = get_dimensions(img)
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height])]
    matrix = _inverse_rotation(center_f, angle)
    return F_t.rotate(img, matrix, interpolation.value, expand, fill)


def hflip(img: Tensor) -> Tensor:
    """Mirrored left to right."""
    return _side(img).hflip(img)


def vflip(img: Tensor) -> Tensor:
    """Mirrored top to bottom."""
    return _side(img).vflip(img)


def five_crop(img: Tensor, size: list[int]) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """The four corner crops and the centre crop of ``size``."""
    size = _pair(size)
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    _, height, width = get_dimensions(img)
    crop_height, crop_width = size
    if crop_width > width or crop_height > height:
        raise ValueError(f"Requested crop size {size} is bigger than input size {(height, width)}")
    return (
        crop(img, 0, 0, crop_height, crop_width),
        crop(img, 0, width - crop_width, crop_height, crop_width),
        crop(img, height - crop_height, 0, crop_height, crop_width),
        crop(img, height - crop_height, width - crop_width, crop_height, crop_width),
        center_crop(img, [crop_height, crop_width]),
    )


def ten_crop(img: Tensor, size: list[int], vertical_flip: bool = False) -> tuple[Tensor, ...]:
    """:func:`five_crop` of the image and of its (horizontally, or vertically) flipped copy."""
    size = _pair(size)
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    return five_crop(img, size) + five_crop(vflip(img) if vertical_flip else hflip(img), size)


def adjust_brightness(img: Tensor, brightness_factor: float) -> Tensor:
    """Blended with black: 0 gives black, 1 the image, 2 twice as bright."""
    return _side(img).adjust_brightness(img, brightness_factor)


def adjust_contrast(img: Tensor, contrast_factor: float) -> Tensor:
    """Blended with its mean gray: 0 gives a gray image, 1 the image."""
    return _side(img).adjust_contrast(img, contrast_factor)


def adjust_saturation(img: Tensor, saturation_factor: float) -> Tensor:
    """Blended with its grayscale: 0 gives black and white, 1 the image."""
    return _side(img).adjust_saturation(img, saturation_factor)


def adjust_hue(img: Tensor, hue_factor: float) -> Tensor:
    """The hue rotated by ``hue_factor`` (in [-0.5, 0.5]) of a turn."""
    return _side(img).adjust_hue(img, hue_factor)


def adjust_gamma(img: Tensor, gamma: float, gain: float = 1) -> Tensor:
    """``gain * img ** gamma`` on the [0, 1] scale (tensor images)."""
    if not isinstance(img, Tensor):
        raise TypeError("adjust_gamma of a PIL image is not in disttorch.vision: convert it to a tensor")
    return F_t.adjust_gamma(img, gamma, gain)


def to_grayscale(img: Any, num_output_channels: int = 1) -> Any:
    """A PIL image in grayscale (1 or 3 channels)."""
    if not F_pil.is_pil_image(img):
        raise TypeError("Input should be PIL Image")
    return F_pil.to_grayscale(img, num_output_channels)


def rgb_to_grayscale(img: Tensor, num_output_channels: int = 1) -> Tensor:
    """A tensor or PIL image in grayscale (1 or 3 channels)."""
    if not isinstance(img, Tensor):
        return F_pil.to_grayscale(img, num_output_channels)
    return F_t.rgb_to_grayscale(img, num_output_channels)


def erase(img: Tensor, i: int, j: int, h: int, w: int, v: Tensor, inplace: bool = False) -> Tensor:
    """The ``h x w`` window at ``(i, j)`` of a tensor image set to ``v``."""
    if not isinstance(img, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    return F_t.erase(img, i, j, h, w, v, inplace=inplace)


def gaussian_blur(img: Tensor, kernel_size: list[int], sigma: list[float] | None = None) -> Tensor:
    """Gaussian blur with odd ``kernel_size`` ``[kx, ky]`` and ``sigma`` (default
    ``0.15 * k + 0.35``), reflecting at the borders."""
    if not isinstance(kernel_size, (int, list, tuple)):
        raise TypeError(f"kernel_size should be int or a sequence of integers. Got {type(kernel_size)}")
    kernel_size = [kernel_size, kernel_size] if isinstance(kernel_size, int) else list(kernel_size)
    if len(kernel_size) != 2:
        raise ValueError(f"If kernel_size is a sequence its length should be 2. Got {len(kernel_size)}")
    if any(k % 2 == 0 or k < 0 for k in kernel_size):
        raise ValueError(f"kernel_size should have odd and positive integers. Got {kernel_size}")
    if sigma is None:
        sigma = [k * 0.15 + 0.35 for k in kernel_size]
    if not isinstance(sigma, (int, float, list, tuple)):
        raise TypeError(f"sigma should be either float or sequence of floats. Got {type(sigma)}")
    if isinstance(sigma, (int, float)):
        sigma = [float(sigma), float(sigma)]
    elif len(sigma) == 1:
        sigma = [sigma[0], sigma[0]]
    if len(sigma) != 2:
        raise ValueError(f"If sigma is a sequence, its length should be 2. Got {len(sigma)}")
    if any(s <= 0.0 for s in sigma):
        raise ValueError(f"sigma should have positive values. Got {sigma}")
    if isinstance(img, Tensor):
        return F_t.gaussian_blur(img, kernel_size, sigma)
    if not F_pil.is_pil_image(img):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")
    return to_pil_image(F_t.gaussian_blur(pil_to_tensor(img), kernel_size, sigma), mode=img.mode)


def invert(img: Tensor) -> Tensor:
    """Each value ``v`` replaced by ``max - v``."""
    return _side(img).invert(img)
