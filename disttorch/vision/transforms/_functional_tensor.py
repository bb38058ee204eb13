"""The tensor side of ``torchvision.transforms.functional``: images are tensors ``[..., C, H, W]``
(``[H, W]`` for one channel), floats in [0, 1] or integers in ``[0, max]`` of their dtype."""

from __future__ import annotations

import disttorch as torch
from disttorch._tensor import Tensor
from disttorch.nn import functional as F

_INTEGER_MAX = {
    torch.uint8: 255,
    torch.int8: 127,
    torch.int16: 32767,
    torch.uint16: 65535,
    torch.int32: 2147483647,
    torch.int64: 9223372036854775807,
}


def _assert_image_tensor(img: Tensor) -> None:
    if img.ndim < 2:
        raise TypeError("Tensor is not a torch image.")


def get_dimensions(img: Tensor) -> list[int]:
    """``[channels, height, width]``."""
    _assert_image_tensor(img)
    return [1 if img.ndim == 2 else img.shape[-3], img.shape[-2], img.shape[-1]]


def get_image_size(img: Tensor) -> list[int]:
    """``[width, height]``."""
    _assert_image_tensor(img)
    return [img.shape[-1], img.shape[-2]]


def get_image_num_channels(img: Tensor) -> int:
    _assert_image_tensor(img)
    return 1 if img.ndim == 2 else img.shape[-3]


def _max_value(dtype) -> int:
    """The brightest value of an image of ``dtype``: 1 for floats, the top of an integer type."""
    return _INTEGER_MAX.get(dtype, 1)


def _assert_channels(img: Tensor, permitted: list[int]) -> None:
    channels = get_dimensions(img)[0]
    if channels not in permitted:
        raise TypeError(f"Input image tensor permitted channel values are {permitted}, but found {channels}")


def convert_image_dtype(image: Tensor, dtype=torch.float) -> Tensor:
    """``image`` in ``dtype``, its values rescaled to the new dtype's range."""
    if image.dtype == dtype:
        return image
    to_float = dtype.is_floating_point
    if image.is_floating_point():
        if to_float:
            return image.to(dtype)
        if (image.dtype == torch.float32 and dtype in (torch.int32, torch.int64)) or (
            image.dtype == torch.float64 and dtype == torch.int64
        ):
            raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed safely.")
        # 1.0 maps to max: scale by max + 1 less a little, so each value gets an equal share
        return image.mul(float(_max_value(dtype)) + 1.0 - 1e-3).to(dtype)
    input_max = float(_max_value(image.dtype))
    if to_float:
        return image.to(dtype) / input_max
    output_max = float(_max_value(dtype))
    if input_max > output_max:
        return torch.div(image, int((input_max + 1) // (output_max + 1)), rounding_mode="floor").to(dtype)
    return image.to(dtype) * int((output_max + 1) // (input_max + 1))


def vflip(img: Tensor) -> Tensor:
    _assert_image_tensor(img)
    return img.flip(-2)


def hflip(img: Tensor) -> Tensor:
    _assert_image_tensor(img)
    return img.flip(-1)


def crop(img: Tensor, top: int, left: int, height: int, width: int) -> Tensor:
    """The window at ``(top, left)`` of ``height x width``; parts outside the image are zeros."""
    _assert_image_tensor(img)
    _, h, w = get_dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        padding = [
            max(-left + min(0, right), 0),
            max(-top + min(0, bottom), 0),
            max(right - max(w, left), 0),
            max(bottom - max(h, top), 0),
        ]
        return pad(img[..., max(top, 0) : bottom, max(left, 0) : right], padding, fill=0)
    return img[..., top:bottom, left:right]


def rgb_to_grayscale(img: Tensor, num_output_channels: int = 1) -> Tensor:
    """ITU-R 601-2 luma (``0.2989 R + 0.587 G + 0.114 B``), in the image's dtype."""
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {img.ndim}")
    _assert_channels(img, [1, 3])
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if img.shape[-3] == 3:
        r, g, b = img.unbind(dim=-3)
        gray = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(dim=-3)
    else:
        gray = img.clone()
    return gray.expand(img.shape) if num_output_channels == 3 else gray


def _blend(img1: Tensor, img2: Tensor, ratio: float) -> Tensor:
    ratio = float(ratio)
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, _max_value(img1.dtype)).to(img1.dtype)


def adjust_brightness(img: Tensor, brightness_factor: float) -> Tensor:
    if brightness_factor < 0:
        raise ValueError(f"brightness_factor ({brightness_factor}) is not non-negative.")
    _assert_image_tensor(img)
    _assert_channels(img, [1, 3])
    return _blend(img, torch.zeros_like(img), brightness_factor)


def adjust_contrast(img: Tensor, contrast_factor: float) -> Tensor:
    if contrast_factor < 0:
        raise ValueError(f"contrast_factor ({contrast_factor}) is not non-negative.")
    _assert_image_tensor(img)
    _assert_channels(img, [3, 1])
    dtype = img.dtype if img.is_floating_point() else torch.float32
    gray = rgb_to_grayscale(img) if get_dimensions(img)[0] == 3 else img
    return _blend(img, torch.mean(gray.to(dtype), dim=(-3, -2, -1), keepdim=True), contrast_factor)


def adjust_saturation(img: Tensor, saturation_factor: float) -> Tensor:
    if saturation_factor < 0:
        raise ValueError(f"saturation_factor ({saturation_factor}) is not non-negative.")
    _assert_image_tensor(img)
    _assert_channels(img, [1, 3])
    if get_dimensions(img)[0] == 1:
        return img
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def adjust_hue(img: Tensor, hue_factor: float) -> Tensor:
    """The hue shifted by ``hue_factor`` turns (in [-0.5, 0.5]) through HSV."""
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    _assert_image_tensor(img)
    _assert_channels(img, [1, 3])
    if get_dimensions(img)[0] == 1:
        return img
    h, s, v = _rgb2hsv(convert_image_dtype(img, torch.float32)).unbind(dim=-3)
    hsv = torch.stack(((h + hue_factor) % 1.0, s, v), dim=-3)
    return convert_image_dtype(_hsv2rgb(hsv), img.dtype)


def adjust_gamma(img: Tensor, gamma: float, gain: float = 1) -> Tensor:
    """``gain * img ** gamma`` on the [0, 1] scale, clamped."""
    _assert_channels(img, [1, 3])
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    result = img if img.is_floating_point() else convert_image_dtype(img, torch.float32)
    return convert_image_dtype((gain * result.pow(gamma)).clamp(0, 1), img.dtype)


def _rgb2hsv(img: Tensor) -> Tensor:
    r, g, b = img.unbind(dim=-3)
    maxc, minc = torch.max(img, dim=-3).values, torch.min(img, dim=-3).values
    gray = maxc == minc
    chroma = maxc - minc
    ones = torch.ones_like(maxc)
    s = chroma / torch.where(gray, ones, maxc)
    divisor = torch.where(gray, ones, chroma)
    rc, gc, bc = (maxc - r) / divisor, (maxc - g) / divisor, (maxc - b) / divisor
    h = (
        (maxc == r) * (bc - gc)
        + ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
        + ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    )
    return torch.stack((torch.fmod(h / 6.0 + 1.0, 1.0), s, maxc), dim=-3)


def _hsv2rgb(img: Tensor) -> Tensor:
    h, s, v = img.unbind(dim=-3)
    sector = torch.floor(h * 6.0)
    f = h * 6.0 - sector
    sector = sector.to(dtype=torch.int32) % 6
    p = torch.clamp(v * (1.0 - s), 0.0, 1.0)
    q = torch.clamp(v * (1.0 - s * f), 0.0, 1.0)
    t = torch.clamp(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    mask = sector.unsqueeze(dim=-3) == torch.arange(6).view(-1, 1, 1)
    table = torch.stack(
        (
            torch.stack((v, q, p, p, t, v), dim=-3),
            torch.stack((t, v, v, q, p, p), dim=-3),
            torch.stack((p, p, t, v, v, q), dim=-3),
        ),
        dim=-4,
    )
    return torch.einsum("...ijk, ...xijk -> ...xjk", mask.to(dtype=img.dtype), table)


def _parse_pad_padding(padding: int | list[int]) -> list[int]:
    """``[left, right, top, bottom]`` from an int, ``[all]``, ``[lr, tb]`` or ``[l, t, r, b]``."""
    if isinstance(padding, int):
        return [padding] * 4
    if len(padding) == 1:
        return [padding[0]] * 4
    if len(padding) == 2:
        return [padding[0], padding[0], padding[1], padding[1]]
    return [padding[0], padding[2], padding[1], padding[3]]


def _pad_symmetric(img: Tensor, padding: list[int]) -> Tensor:
    """Mirror padding that repeats the edge pixel; negative amounts crop."""
    left, right, top, bottom = (max(-p, 0) for p in padding)
    img = img[..., top : img.shape[-2] - bottom, left : img.shape[-1] - right]
    left, right, top, bottom = (max(p, 0) for p in padding)
    xs = torch.tensor(
        list(range(left - 1, -1, -1)) + list(range(img.shape[-1])) + [-(i + 1) for i in range(right)]
    )
    ys = torch.tensor(
        list(range(top - 1, -1, -1)) + list(range(img.shape[-2])) + [-(i + 1) for i in range(bottom)]
    )
    if img.ndim not in (3, 4):
        raise RuntimeError("Symmetric padding of N-D tensors are not supported yet")
    return img[..., ys[:, None], xs[None, :]]


def pad(
    img: Tensor, padding: int | list[int], fill: int | float | None = 0, padding_mode: str = "constant"
) -> Tensor:
    """Pad the borders: ``padding`` as in :func:`_parse_pad_padding`'s ``(l, t, r, b)`` order,
    ``padding_mode`` ``constant`` (``fill``), ``edge``, ``reflect`` or ``symmetric``."""
    _assert_image_tensor(img)
    fill = 0 if fill is None else fill
    if not isinstance(padding, (int, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if not isinstance(fill, (int, float)):
        raise TypeError("Got inappropriate fill arg")
    if not isinstance(padding_mode, str):
        raise TypeError("Got inappropriate padding_mode arg")
    if isinstance(padding, (tuple, list)) and len(padding) not in (1, 2, 4):
        raise ValueError(
            f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple"
        )
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    amounts = _parse_pad_padding(list(padding) if isinstance(padding, tuple) else padding)
    if padding_mode == "symmetric":
        return _pad_symmetric(img, amounts)
    mode = "replicate" if padding_mode == "edge" else padding_mode
    squeeze = img.ndim < 4
    batch = img.unsqueeze(dim=0) if squeeze else img
    cast = mode != "constant" and img.dtype not in (torch.float32, torch.float64)
    if cast:
        batch = batch.to(torch.float32)
    if mode == "constant":
        batch = F.pad(batch, amounts, mode=mode, value=float(fill))
    else:
        batch = F.pad(batch, amounts, mode=mode)
    if squeeze:
        batch = batch.squeeze(dim=0)
    return batch.to(img.dtype) if cast else batch


def _cast_squeeze_in(img: Tensor, dtypes: list) -> tuple[Tensor, bool, bool, object]:
    squeeze = img.ndim < 4
    out_dtype = img.dtype
    if squeeze:
        img = img.unsqueeze(dim=0)
    cast = out_dtype not in dtypes
    return (img.to(dtypes[0]) if cast else img), cast, squeeze, out_dtype


def _cast_squeeze_out(img: Tensor, cast: bool, squeeze: bool, out_dtype) -> Tensor:
    if squeeze:
        img = img.squeeze(dim=0)
    if cast:
        if not out_dtype.is_floating_point:
            img = torch.round(img)
        img = img.to(out_dtype)
    return img


def _affine_output_size(matrix: list[float], w: int, h: int) -> tuple[int, int]:
    """The size holding the whole of a ``w`` x ``h`` image moved by the inverse affine
    ``matrix``: its corners' extent in pixels from the top-left, trimmed to 1e-4 before
    rounding outwards."""
    corners = torch.tensor(
        [
            [-0.5 * w, -0.5 * h, 1.0],
            [-0.5 * w, 0.5 * h, 1.0],
            [0.5 * w, 0.5 * h, 1.0],
            [0.5 * w, -0.5 * h, 1.0],
        ]
    )
    moved = torch.matmul(corners, torch.tensor(matrix, dtype=torch.float).view(2, 3).T)
    shift = torch.tensor((w * 0.5, h * 0.5))
    tol = 1e-4
    high = torch.ceil(((moved.max(dim=0)[0] + shift) / tol).trunc_() * tol)
    low = torch.floor(((moved.min(dim=0)[0] + shift) / tol).trunc_() * tol)
    size = high - low
    return int(size[0]), int(size[1])


def _affine_grid(theta: Tensor, w: int, h: int, ow: int, oh: int) -> Tensor:
    """``grid_sample``'s grid (``1, oh, ow, 2``, align_corners=False) for the pixel centres of
    an ``ow`` x ``oh`` output, taken through ``theta`` (pixel units about the centre) into
    the ``w`` x ``h`` input."""
    base = torch.empty(1, oh, ow, 3, dtype=theta.dtype)
    base[..., 0].copy_(torch.linspace(-ow * 0.5 + 0.5, ow * 0.5 - 0.5, steps=ow))
    base[..., 1].copy_(torch.linspace(-oh * 0.5 + 0.5, oh * 0.5 - 0.5, steps=oh).unsqueeze_(-1))
    base[..., 2].fill_(1)
    scaled = theta.transpose(1, 2) / torch.tensor([0.5 * w, 0.5 * h], dtype=theta.dtype)
    return base.view(1, oh * ow, 3).bmm(scaled).view(1, oh, ow, 2)


def _grid_transform(img: Tensor, grid: Tensor, mode: str, fill: list[float] | float | None) -> Tensor:
    """``img`` sampled at ``grid``; outside the image, ``fill`` (zeros when None), blended by
    a sampled mask of ones (bilinear) or put where the mask fell below half (nearest)."""
    img, cast, squeeze, out_dtype = _cast_squeeze_in(img, [grid.dtype])
    if img.shape[0] > 1:
        grid = grid.expand(img.shape[0], grid.shape[1], grid.shape[2], grid.shape[3])
    if fill is not None:
        img = torch.cat(
            (img, torch.ones((img.shape[0], 1, img.shape[2], img.shape[3]), dtype=img.dtype)), dim=1
        )
    img = F.grid_sample(img, grid, mode=mode, padding_mode="zeros", align_corners=False)
    if fill is not None:
        mask, img = img[:, -1:, :, :].expand_as(img[:, :-1]), img[:, :-1, :, :]
        values = list(fill) if isinstance(fill, (tuple, list)) else [float(fill)]
        fill_img = torch.tensor(values, dtype=img.dtype).view(1, len(values), 1, 1).expand_as(img)
        if mode == "nearest":
            outside = mask < 0.5
            img[outside] = fill_img[outside]
        else:
            img = img * mask + (1.0 - mask) * fill_img
    return _cast_squeeze_out(img, cast, squeeze, out_dtype)


def rotate(
    img: Tensor, matrix: list[float], interpolation: str = "nearest", expand: bool = False, fill=None
) -> Tensor:
    """``img`` moved by the inverse affine ``matrix`` (``functional.rotate`` builds it)."""
    _assert_image_tensor(img)
    w, h = img.shape[-1], img.shape[-2]
    ow, oh = _affine_output_size(matrix, w, h) if expand else (w, h)
    dtype = img.dtype if img.is_floating_point() else torch.float32
    theta = torch.tensor(matrix, dtype=dtype).reshape(1, 2, 3)
    return _grid_transform(img, _affine_grid(theta, w, h, ow, oh), interpolation, fill)


def resize(
    img: Tensor,
    size: list[int],
    interpolation: str = "bilinear",
    antialias: bool | None = True,
    native_uint8: bool = False,
) -> Tensor:
    """``img`` resized to ``size`` ``[h, w]`` by :func:`disttorch.nn.functional.interpolate`
    (antialiased for bilinear and bicubic unless ``antialias`` is False). uint8 images are
    resized as floats and rounded back, or with ``native_uint8`` (transforms v2) as uint8 by
    ``interpolate`` itself."""
    _assert_image_tensor(img)
    antialias = bool(antialias) and interpolation in ("bilinear", "bicubic")
    dtypes = [torch.float32, torch.float64] + ([torch.uint8] if native_uint8 else [])
    batch, cast, squeeze, out_dtype = _cast_squeeze_in(img, dtypes)
    align_corners = False if interpolation in ("bilinear", "bicubic") else None
    batch = F.interpolate(
        batch, size=list(size), mode=interpolation, align_corners=align_corners, antialias=antialias
    )
    if interpolation == "bicubic" and out_dtype == torch.uint8:
        batch = batch.clamp(min=0, max=255)
    return _cast_squeeze_out(batch, cast, squeeze, out_dtype)


def normalize(tensor: Tensor, mean: list[float], std: list[float], inplace: bool = False) -> Tensor:
    """``(tensor - mean) / std`` per channel."""
    _assert_image_tensor(tensor)
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError(
            f"Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = {tensor.size()}"
        )
    if not inplace:
        tensor = tensor.clone()
    mean = torch.as_tensor(mean, dtype=tensor.dtype)
    std = torch.as_tensor(std, dtype=tensor.dtype)
    if (std == 0).any():
        raise ValueError(
            f"std evaluated to zero after conversion to {tensor.dtype}, leading to division by zero."
        )
    mean = mean.view(-1, 1, 1) if mean.ndim == 1 else mean
    std = std.view(-1, 1, 1) if std.ndim == 1 else std
    return tensor.sub_(mean).div_(std)


def erase(img: Tensor, i: int, j: int, h: int, w: int, v: Tensor, inplace: bool = False) -> Tensor:
    """The ``h x w`` window at ``(i, j)`` set to ``v``."""
    _assert_image_tensor(img)
    if not inplace:
        img = img.clone()
    img[..., i : i + h, j : j + w] = v
    return img


def _gaussian_kernel1d(size: int, sigma: float, dtype) -> Tensor:
    half = (size - 1) * 0.5
    pdf = torch.exp(-0.5 * (torch.linspace(-half, half, steps=size, dtype=dtype) / sigma).pow(2))
    return pdf / pdf.sum()


def gaussian_blur(img: Tensor, kernel_size: list[int], sigma: list[float]) -> Tensor:
    """A separable Gaussian of ``kernel_size`` ``[kx, ky]`` and ``sigma`` ``[sx, sy]``, reflecting at the borders."""
    _assert_image_tensor(img)
    dtype = img.dtype if img.is_floating_point() else torch.float32
    kernel = torch.mm(
        _gaussian_kernel1d(kernel_size[1], sigma[1], dtype)[:, None],
        _gaussian_kernel1d(kernel_size[0], sigma[0], dtype)[None, :],
    )
    kernel = kernel.expand(img.shape[-3], 1, kernel.shape[0], kernel.shape[1])
    batch, cast, squeeze, out_dtype = _cast_squeeze_in(img, [kernel.dtype])
    padding = [kernel_size[0] // 2, kernel_size[0] // 2, kernel_size[1] // 2, kernel_size[1] // 2]
    batch = F.conv2d(F.pad(batch, padding, mode="reflect"), kernel, groups=batch.shape[-3])
    return _cast_squeeze_out(batch, cast, squeeze, out_dtype)


def invert(img: Tensor) -> Tensor:
    _assert_image_tensor(img)
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {img.ndim}")
    _assert_channels(img, [1, 3])
    return _max_value(img.dtype) - img
