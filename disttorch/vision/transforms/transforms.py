"""``torchvision.transforms`` (v1): callable image transforms over :mod:`.functional`. The
random ones draw from disttorch's default generator exactly as torchvision draws from
PyTorch's (the same calls in the same order), so a seed gives the same crops and flips."""

from __future__ import annotations

import math
import numbers
import random
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import disttorch as torch
from disttorch import nn
from disttorch._tensor import Tensor

from . import functional as F
from .functional import InterpolationMode, _interpolation_modes_from_int

__all__ = [
    "RandomRotation",
    "CenterCrop",
    "ColorJitter",
    "Compose",
    "ConvertImageDtype",
    "FiveCrop",
    "GaussianBlur",
    "Grayscale",
    "InterpolationMode",
    "Lambda",
    "Normalize",
    "PILToTensor",
    "Pad",
    "RandomApply",
    "RandomChoice",
    "RandomCrop",
    "RandomErasing",
    "RandomGrayscale",
    "RandomHorizontalFlip",
    "RandomOrder",
    "RandomResizedCrop",
    "RandomVerticalFlip",
    "Resize",
    "TenCrop",
    "ToPILImage",
    "ToTensor",
]

_TWO_DIMENSIONS = "Please provide only two dimensions (h, w) for size."


def _setup_size(size: Any, error_msg: str) -> Any:
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size


def _listing(name: str, items: Sequence[Any], head: str = "") -> str:
    """``Name(\\n    head\\n    item\\n    ...\\n)``, as torchvision prints its containers."""
    lines = ([head] if head else []) + [str(t) for t in items]
    return name + "(" + "".join(f"\n    {line}" for line in lines) + "\n)"


class Compose:
    """Applies ``transforms`` one after the other."""

    def __init__(self, transforms: Sequence[Callable]) -> None:
        self.transforms = transforms

    def __call__(self, img: Any) -> Any:
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        return _listing(type(self).__name__, self.transforms)


class ToTensor:
    """A PIL image or ndarray ``HxWxC`` in [0, 255] to a float tensor ``CxHxW`` in [0, 1]."""

    def __call__(self, pic: Any) -> Tensor:
        return F.to_tensor(pic)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class PILToTensor:
    """A PIL image to a tensor ``CxHxW`` of the same values and dtype."""

    def __call__(self, pic: Any) -> Tensor:
        return F.pil_to_tensor(pic)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class ConvertImageDtype(nn.Module):
    """A tensor image in ``dtype``, its values rescaled (see ``functional.convert_image_dtype``)."""

    def __init__(self, dtype) -> None:
        super().__init__()
        self.dtype = dtype

    def forward(self, image: Tensor) -> Tensor:
        return F.convert_image_dtype(image, self.dtype)


class ToPILImage:
    """A tensor or ndarray to a PIL image of ``mode`` (default from channels and dtype)."""

    def __init__(self, mode: str | None = None) -> None:
        self.mode = mode

    def __call__(self, pic: Any) -> Any:
        return F.to_pil_image(pic, self.mode)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ("" if self.mode is None else f"mode={self.mode}") + ")"


class Normalize(nn.Module):
    """``(input - mean) / std`` per channel of a float tensor image."""

    def __init__(self, mean: Sequence[float], std: Sequence[float], inplace: bool = False) -> None:
        super().__init__()
        self.mean, self.std, self.inplace = mean, std, inplace

    def forward(self, tensor: Tensor) -> Tensor:
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(mean={self.mean}, std={self.std})"


class Resize(nn.Module):
    """Resize to ``size``: an int (or one-element sequence) sets the shorter edge, keeping the
    aspect ratio; ``(h, w)`` sets both."""

    def __init__(
        self,
        size: int | Sequence[int],
        interpolation: InterpolationMode | int = InterpolationMode.BILINEAR,
        max_size: int | None = None,
        antialias: bool | None = True,
    ) -> None:
        super().__init__()
        if not isinstance(size, (int, Sequence)):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size, self.max_size, self.antialias = size, max_size, antialias
        self.interpolation = (
            _interpolation_modes_from_int(interpolation) if isinstance(interpolation, int) else interpolation
        )

    def forward(self, img: Any) -> Any:
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(size={self.size}, interpolation={self.interpolation.value}, "
            f"max_size={self.max_size}, antialias={self.antialias})"
        )


class CenterCrop(nn.Module):
    """The centred ``size`` window (zero-padded where the image is smaller)."""

    def __init__(self, size: int | Sequence[int]) -> None:
        super().__init__()
        self.size = _setup_size(size, error_msg=_TWO_DIMENSIONS)

    def forward(self, img: Any) -> Any:
        return F.center_crop(img, self.size)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size})"


class Pad(nn.Module):
    """Pad the borders (see ``functional.pad``)."""

    def __init__(self, padding: int | Sequence[int], fill: Any = 0, padding_mode: str = "constant") -> None:
        super().__init__()
        if not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if not isinstance(fill, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate fill arg")
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        if isinstance(padding, Sequence) and len(padding) not in (1, 2, 4):
            raise ValueError(
                f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple"
            )
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def forward(self, img: Any) -> Any:
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(padding={self.padding}, fill={self.fill}, padding_mode={self.padding_mode})"


class Lambda:
    """Applies a user function."""

    def __init__(self, lambd: Callable) -> None:
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img: Any) -> Any:
        return self.lambd(img)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class RandomTransforms:
    """Base of transforms choosing among ``transforms`` (Python's ``random``, as torchvision)."""

    def __init__(self, transforms: Sequence[Callable]) -> None:
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence")
        self.transforms = transforms

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError()

    def __repr__(self) -> str:
        return _listing(type(self).__name__, self.transforms)


class RandomApply(nn.Module):
    """Applies all of ``transforms`` with probability ``p``."""

    def __init__(self, transforms: Sequence[Callable], p: float = 0.5) -> None:
        super().__init__()
        self.transforms, self.p = transforms, p

    def forward(self, img: Any) -> Any:
        if self.p < torch.rand(1):
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        return _listing(type(self).__name__, self.transforms, head=f"p={self.p}")


class RandomOrder(RandomTransforms):
    """Applies ``transforms`` in a random order."""

    def __call__(self, img: Any) -> Any:
        order = list(range(len(self.transforms)))
        random.shuffle(order)
        for i in order:
            img = self.transforms[i](img)
        return img


class RandomChoice(RandomTransforms):
    """Applies one of ``transforms``, picked with weights ``p``."""

    def __init__(self, transforms: Sequence[Callable], p: Sequence[float] | None = None) -> None:
        super().__init__(transforms)
        if p is not None and not isinstance(p, Sequence):
            raise TypeError("Argument p should be a sequence")
        self.p = p

    def __call__(self, *args: Any) -> Any:
        return random.choices(self.transforms, weights=self.p)[0](*args)

    def __repr__(self) -> str:
        return f"{super().__repr__()}(p={self.p})"


class RandomCrop(nn.Module):
    """A ``size`` window at a random place, after optional padding."""

    @staticmethod
    def get_params(img: Any, output_size: tuple[int, int]) -> tuple[int, int, int, int]:
        """``(top, left, height, width)`` of a random crop of ``output_size``."""
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        i = torch.randint(0, h - th + 1, size=(1,)).item()
        j = torch.randint(0, w - tw + 1, size=(1,)).item()
        return i, j, th, tw

    def __init__(
        self,
        size: int | Sequence[int],
        padding: int | Sequence[int] | None = None,
        pad_if_needed: bool = False,
        fill: Any = 0,
        padding_mode: str = "constant",
    ) -> None:
        super().__init__()
        self.size = tuple(_setup_size(size, error_msg=_TWO_DIMENSIONS))
        self.padding, self.pad_if_needed, self.fill, self.padding_mode = (
            padding,
            pad_if_needed,
            fill,
            padding_mode,
        )

    def forward(self, img: Any) -> Any:
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = F.pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = F.pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        return F.crop(img, *self.get_params(img, self.size))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size}, padding={self.padding})"


class _RandomFlip(nn.Module):
    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: Any) -> Any:
        return self._flip(img) if torch.rand(1) < self.p else img

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p={self.p})"


def _check_pair(x: Any, name: str) -> None:
    """torchvision's check of a two-number argument (``degrees``, ``center``)."""
    if not isinstance(x, Sequence):
        raise TypeError(f"{name} should be a sequence of length 2.")
    if len(x) != 2:
        raise ValueError(f"{name} should be a sequence of length 2.")


class RandomRotation(nn.Module):
    """Turned by an angle drawn uniformly from ``degrees`` (``d`` means ``(-d, d)``), as
    :func:`functional.rotate` turns it."""

    def __init__(
        self,
        degrees: Any,
        interpolation: InterpolationMode | int = InterpolationMode.NEAREST,
        expand: bool = False,
        center: Sequence[int] | None = None,
        fill: Any = 0,
    ) -> None:
        super().__init__()
        self.interpolation = (
            _interpolation_modes_from_int(interpolation) if isinstance(interpolation, int) else interpolation
        )
        if isinstance(degrees, numbers.Number):
            if degrees < 0:
                raise ValueError("If degrees is a single number, it must be positive.")
            degrees = [-degrees, degrees]
        else:
            _check_pair(degrees, "degrees")
        self.degrees = [float(d) for d in degrees]
        if center is not None:
            _check_pair(center, "center")
        if fill is None:
            fill = 0
        elif not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.center, self.expand, self.fill = center, expand, fill

    @staticmethod
    def get_params(degrees: list[float]) -> float:
        """An angle drawn uniformly from ``degrees`` with torch's generator."""
        return float(torch.empty(1).uniform_(float(degrees[0]), float(degrees[1])).item())

    def forward(self, img: Any) -> Any:
        fill = self.fill
        if isinstance(img, Tensor):
            channels = F.get_dimensions(img)[0]
            fill = [float(fill)] * channels if isinstance(fill, (int, float)) else [float(f) for f in fill]
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, fill)

    def __repr__(self) -> str:
        text = f"{type(self).__name__}(degrees={self.degrees}, interpolation={self.interpolation.value}, expand={self.expand}"
        if self.center is not None:
            text += f", center={self.center}"
        if self.fill is not None:
            text += f", fill={self.fill}"
        return text + ")"


class RandomHorizontalFlip(_RandomFlip):
    """Mirrors left to right with probability ``p``."""

    _flip = staticmethod(F.hflip)


class RandomVerticalFlip(_RandomFlip):
    """Mirrors top to bottom with probability ``p``."""

    _flip = staticmethod(F.vflip)


class RandomResizedCrop(nn.Module):
    """A random window of area ``scale`` (of the image's) and aspect ``ratio``, resized to ``size``."""

    def __init__(
        self,
        size: int | Sequence[int],
        scale: tuple[float, float] = (0.08, 1.0),
        ratio: tuple[float, float] = (3.0 / 4.0, 4.0 / 3.0),
        interpolation: InterpolationMode | int = InterpolationMode.BILINEAR,
        antialias: bool | None = True,
    ) -> None:
        super().__init__()
        self.size = _setup_size(size, error_msg=_TWO_DIMENSIONS)
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            warnings.warn("Scale and ratio should be of kind (min, max)", stacklevel=2)
        self.interpolation = (
            _interpolation_modes_from_int(interpolation) if isinstance(interpolation, int) else interpolation
        )
        self.antialias, self.scale, self.ratio = antialias, scale, ratio

    @staticmethod
    def get_params(img: Any, scale: Sequence[float], ratio: Sequence[float]) -> tuple[int, int, int, int]:
        """``(top, left, height, width)``: ten tries at a random area and log-uniform aspect,
        then the centred crop clamped to ``ratio``."""
        _, height, width = F.get_dimensions(img)
        area = height * width
        log_ratio = torch.log(torch.tensor(ratio))
        for _ in range(10):
            target_area = area * torch.empty(1).uniform_(scale[0], scale[1]).item()
            aspect_ratio = torch.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = torch.randint(0, height - h + 1, size=(1,)).item()
                j = torch.randint(0, width - w + 1, size=(1,)).item()
                return i, j, h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w, h = width, int(round(width / min(ratio)))
        elif in_ratio > max(ratio):
            w, h = int(round(height * max(ratio))), height
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img: Any) -> Any:
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation, antialias=self.antialias)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(size={self.size}, scale={tuple(round(s, 4) for s in self.scale)}, "
            f"ratio={tuple(round(r, 4) for r in self.ratio)}, interpolation={self.interpolation.value}, "
            f"antialias={self.antialias})"
        )


class FiveCrop(nn.Module):
    """The four corner crops and the centre crop of ``size`` (a tuple of five images)."""

    def __init__(self, size: int | Sequence[int]) -> None:
        super().__init__()
        self.size = _setup_size(size, error_msg=_TWO_DIMENSIONS)

    def forward(self, img: Any) -> tuple:
        return F.five_crop(img, self.size)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size})"


class TenCrop(nn.Module):
    """:class:`FiveCrop` of the image and of its flipped copy."""

    def __init__(self, size: int | Sequence[int], vertical_flip: bool = False) -> None:
        super().__init__()
        self.size = _setup_size(size, error_msg=_TWO_DIMENSIONS)
        self.vertical_flip = vertical_flip

    def forward(self, img: Any) -> tuple:
        return F.ten_crop(img, self.size, self.vertical_flip)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size}, vertical_flip={self.vertical_flip})"


class ColorJitter(nn.Module):
    """Random brightness, contrast, saturation and hue factors, applied in a random order."""

    def __init__(
        self,
        brightness: float | tuple[float, float] = 0,
        contrast: float | tuple[float, float] = 0,
        saturation: float | tuple[float, float] = 0,
        hue: float | tuple[float, float] = 0,
    ) -> None:
        super().__init__()
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    def _check_input(
        self,
        value: Any,
        name: str,
        center: float = 1,
        bound=(0, float("inf")),
        clip_first_on_zero: bool = True,
    ) -> tuple[float, float] | None:
        """``[low, high]`` from a spread around ``center`` or a pair; None when it is no change."""
        if isinstance(value, numbers.Number):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - float(value), center + float(value)]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            value = [float(value[0]), float(value[1])]
        else:
            raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, but got {value}.")
        return None if value[0] == value[1] == center else tuple(value)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue) -> tuple[Tensor, Any, Any, Any, Any]:
        """A random order of the four adjustments and a factor for each range not None."""
        order = torch.randperm(4)
        factors = [
            None if r is None else float(torch.empty(1).uniform_(r[0], r[1]))
            for r in (brightness, contrast, saturation, hue)
        ]
        return (order, *factors)

    def forward(self, img: Any) -> Any:
        order, *factors = self.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        adjust = (F.adjust_brightness, F.adjust_contrast, F.adjust_saturation, F.adjust_hue)
        for index in order.tolist():
            if factors[index] is not None:
                img = adjust[index](img, factors[index])
        return img

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(brightness={self.brightness}, contrast={self.contrast}, "
            f"saturation={self.saturation}, hue={self.hue})"
        )


class Grayscale(nn.Module):
    """The image in grayscale, with 1 or 3 channels."""

    def __init__(self, num_output_channels: int = 1) -> None:
        super().__init__()
        self.num_output_channels = num_output_channels

    def forward(self, img: Any) -> Any:
        return F.rgb_to_grayscale(img, num_output_channels=self.num_output_channels)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_output_channels={self.num_output_channels})"


class RandomGrayscale(nn.Module):
    """Grayscale (keeping the channel count) with probability ``p``."""

    def __init__(self, p: float = 0.1) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: Any) -> Any:
        channels, _, _ = F.get_dimensions(img)
        if torch.rand(1) < self.p:
            return F.rgb_to_grayscale(img, num_output_channels=channels)
        return img

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p={self.p})"


class RandomErasing(nn.Module):
    """With probability ``p``, a random rectangle of a tensor image (area ``scale``, aspect
    ``ratio``) set to ``value`` (a number, one per channel, or ``'random'`` normal noise)."""

    def __init__(
        self,
        p: float = 0.5,
        scale: tuple[float, float] = (0.02, 0.33),
        ratio: tuple[float, float] = (0.3, 3.3),
        value: Any = 0,
        inplace: bool = False,
    ) -> None:
        super().__init__()
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            warnings.warn("Scale and ratio should be of kind (min, max)", stacklevel=2)
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p, self.scale, self.ratio, self.value, self.inplace = p, scale, ratio, value, inplace

    @staticmethod
    def get_params(
        img: Tensor, scale: tuple[float, float], ratio: tuple[float, float], value: list[float] | None = None
    ) -> tuple[int, int, int, int, Tensor]:
        """``(top, left, height, width, values)`` of the rectangle (ten tries, else the whole
        image unchanged)."""
        channels, img_h, img_w = img.shape[-3], img.shape[-2], img.shape[-1]
        area = img_h * img_w
        log_ratio = torch.log(torch.tensor(ratio))
        for _ in range(10):
            erase_area = area * torch.empty(1).uniform_(scale[0], scale[1]).item()
            aspect_ratio = torch.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
            h = int(round(math.sqrt(erase_area * aspect_ratio)))
            w = int(round(math.sqrt(erase_area / aspect_ratio)))
            if not (h < img_h and w < img_w):
                continue
            if value is None:
                v = torch.empty([channels, h, w], dtype=torch.float32).normal_()
            else:
                v = torch.tensor(value)[:, None, None]
            i = torch.randint(0, img_h - h + 1, size=(1,)).item()
            j = torch.randint(0, img_w - w + 1, size=(1,)).item()
            return i, j, h, w, v
        return 0, 0, img_h, img_w, img

    def forward(self, img: Tensor) -> Tensor:
        if not torch.rand(1) < self.p:
            return img
        if isinstance(self.value, (int, float)):
            value = [float(self.value)]
        elif isinstance(self.value, str):
            value = None
        else:
            value = [float(v) for v in self.value]
        if value is not None and len(value) not in (1, img.shape[-3]):
            raise ValueError(
                "If value is a sequence, it should have either a single value or "
                f"{img.shape[-3]} (number of input channels)"
            )
        x, y, h, w, v = self.get_params(img, scale=self.scale, ratio=self.ratio, value=value)
        return F.erase(img, x, y, h, w, v, self.inplace)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(p={self.p}, scale={self.scale}, ratio={self.ratio}, "
            f"value={self.value}, inplace={self.inplace})"
        )


class GaussianBlur(nn.Module):
    """Gaussian blur of ``kernel_size`` with a sigma drawn uniformly from ``sigma`` ``(min, max)``."""

    def __init__(
        self, kernel_size: int | Sequence[int], sigma: float | tuple[float, float] = (0.1, 2.0)
    ) -> None:
        super().__init__()
        self.kernel_size = _setup_size(kernel_size, "Kernel size should be a tuple/list of two integers")
        if any(k <= 0 or k % 2 == 0 for k in self.kernel_size):
            raise ValueError("Kernel size value should be an odd and positive number.")
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
        elif isinstance(sigma, Sequence) and len(sigma) == 2:
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
        else:
            raise ValueError("sigma should be a single number or a list/tuple with length 2.")
        self.sigma = sigma

    @staticmethod
    def get_params(sigma_min: float, sigma_max: float) -> float:
        return torch.empty(1).uniform_(sigma_min, sigma_max).item()

    def forward(self, img: Any) -> Any:
        sigma = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [sigma, sigma])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kernel_size={self.kernel_size}, sigma={self.sigma})"
