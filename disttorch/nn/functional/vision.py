"""Resampling and rearranging images: ``pixel_shuffle``/``pixel_unshuffle``,
``channel_shuffle``, ``interpolate`` (and the deprecated ``upsample*``), ``affine_grid``
and ``grid_sample``.

The shuffles, ``affine_grid`` and ``grid_sample`` are composed from differentiable tensor
ops (reshape/permute, gathers, products with weights), so gradients reach both the input
and the sampling grid. Interpolation is separable: each spatial dim is resampled in turn
by one ``AxisTaps`` op that gathers its few neighbouring rows (1 for nearest, 2 for
linear, 4 for cubic) and sums them with per-position weights; its backward adds the
gradient back with one segmented sum per tap, never a loop over pixels.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._tensor import Tensor
from ...autograd.function import Function
from ...ops import elementwise as _ew
from ._axis_taps import AxisTaps
from ._fused import numpy_backward
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

__all__ = [
    "GRID_SAMPLE_INTERPOLATION_MODES",
    "GRID_SAMPLE_PADDING_MODES",
    "affine_grid",
    "channel_shuffle",
    "grid_sample",
    "interpolate",
    "native_channel_shuffle",
    "pixel_shuffle",
    "pixel_unshuffle",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]

GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


# ---------------------------------------------------------------------- shuffles
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearrange ``(*, C*r^2, H, W)`` into ``(*, C, H*r, W*r)`` (sub-pixel convolution)."""
    r = int(upscale_factor)
    shape = tuple(input.shape)
    if len(shape) < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input "
                           f"with {len(shape)} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by "
                           f"the square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """Rearrange ``(*, C, H*r, W*r)`` into ``(*, C*r^2, H, W)``; the inverse of
    :func:`pixel_shuffle`."""
    r = int(downscale_factor)
    shape = tuple(input.shape)
    if len(shape) < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input "
                           f"with {len(shape)} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = shape
    if h % r or w % r:
        which, size = ("height", h) if h % r else ("width", w)
        raise RuntimeError(f"pixel_unshuffle expects {which} to be divisible by downscale_factor, but "
                           f"input.size({-2 if h % r else -1})={size} is not divisible by {r}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Split the channels (dim 1) into ``groups`` and interleave them (ShuffleNet)."""
    shape = tuple(input.shape)
    if len(shape) < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input "
                           f"with {len(shape)} dimension(s)")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and "
                           f"{groups} groups.")
    x = input.reshape(shape[0], groups, c // groups, *shape[2:])
    return x.transpose(1, 2).reshape(shape)


native_channel_shuffle = channel_shuffle


# ---------------------------------------------------------------------- interpolate
_DIMS_OF_MODE = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def _output_geometry(shape: tuple, d: int, size: Any, scale_factor: Any,
                     recompute_scale_factor: bool | None) -> tuple:
    """(output sizes, scales used for source coordinates or None per dim), as PyTorch."""
    spatial = shape[2:]
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = list(size) if isinstance(size, (list, tuple)) else [size] * d
        if len(sizes) != d:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but "
                             f"got input with spatial dimensions of {list(spatial)} and output size of "
                             f"{list(sizes)}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                             f"format and output size in (o1, o2, ...,oK) format.")
        return tuple(int(s) for s in sizes), (None,) * d
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    scales = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor] * d
    if len(scales) != d:
        raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but "
                         f"got input with spatial dimensions of {list(spatial)} and scale_factor of "
                         f"shape {list(scales)}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                         f"format and scale_factor in (s1, s2, ...,sK) format.")
    sizes = tuple(math.floor(float(n) * float(s)) for n, s in zip(spatial, scales))
    used = (None,) * d if recompute_scale_factor else tuple(float(s) for s in scales)
    return sizes, used


def _source(out: int, size: int, scale: float | None, align_corners: bool, cubic: bool) -> np.ndarray:
    """Source coordinate of each output position for the linear/cubic modes."""
    dst = np.arange(out, dtype=np.float64)
    if align_corners:
        return dst * ((size - 1) / (out - 1)) if out > 1 else np.zeros(out)
    ratio = 1.0 / scale if scale is not None and scale > 0 else size / out
    src = (dst + 0.5) * ratio - 0.5
    return src if cubic else np.maximum(src, 0.0)


def _cubic_weights(t: np.ndarray, a: float = -0.75) -> list:
    """Keys' cubic convolution weights of the four taps at offsets -1, 0, 1, 2."""
    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _axis_taps(size: int, out: int, mode: str, scale: float | None, align_corners: bool) -> list:
    """``[(indices, weights or None), ...]`` resampling ``size`` positions to ``out``."""
    if mode in ("nearest", "nearest-exact"):
        ratio = 1.0 / scale if scale is not None and scale > 0 else size / out
        offset = 0.5 if mode == "nearest-exact" else 0.0
        return [(np.minimum(np.floor((np.arange(out) + offset) * ratio).astype(np.int64), size - 1), None)]
    cubic = mode == "bicubic"
    src = _source(out, size, scale, align_corners, cubic)
    base = np.floor(src).astype(np.int64)
    t = src - base
    if cubic:
        return [(np.clip(base + k, 0, size - 1), w) for k, w in zip((-1, 0, 1, 2), _cubic_weights(t))]
    base = np.minimum(base, size - 1)
    return [(base, 1.0 - t), (np.minimum(base + 1, size - 1), t)]


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize ``(N, C, *spatial)`` (1-3 spatial dims) to ``size`` or by ``scale_factor``.

    Args:
        mode: ``'nearest'``, ``'nearest-exact'``, ``'linear'`` (3-D input), ``'bilinear'``
            (4-D), ``'bicubic'`` (4-D), ``'trilinear'`` (5-D) or ``'area'``.
        align_corners: linear/cubic modes only: map the corner pixels' centres onto each
            other (True) or the corners of the pixel grid (False, the default).
        recompute_scale_factor: compute the source coordinates from the output size
            instead of the given ``scale_factor``.
        antialias: only False is supported (the anti-aliased down-sampling filter is not
            implemented; a ValueError says so).
    """
    d = input.ndim - 2
    if d not in (1, 2, 3):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                                  f"{input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | "
                                  f"trilinear | area | nearest-exact (got {mode})")
    valid = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area")
    if mode not in valid:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                                  f"{input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | "
                                  f"trilinear | area | nearest-exact (got {mode})")
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif _DIMS_OF_MODE[mode] != d:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_DIMS_OF_MODE[mode] + 2}D input")
    if antialias:
        raise ValueError("interpolate: antialias=True is not supported by disttorch; use antialias=False")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    sizes, scales = _output_geometry(tuple(input.shape), d, size, scale_factor, recompute_scale_factor)
    if any(s <= 0 for s in sizes):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({', '.join(map(str, input.shape[2:]))}) output ({', '.join(map(str, sizes))})")
    if mode == "area":
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[d - 1](input, sizes)
    out = input
    for i in range(d):
        if sizes[i] != input.shape[2 + i] or scales[i] not in (None, 1.0) or mode == "bicubic":
            taps = _axis_taps(input.shape[2 + i], sizes[i], mode, scales[i], bool(align_corners))
            out = AxisTaps.apply(out, 2 + i, taps)
    return out if out is not input else input.clone()


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated alias of :func:`interpolate` (warns, as PyTorch)."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---------------------------------------------------------------------- affine_grid / grid_sample
def _base_coords(n: int, align_corners: bool) -> np.ndarray:
    c = np.linspace(-1.0, 1.0, n) if n > 1 else np.zeros(1)
    return c if align_corners else c * (n - 1) / n


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """Sampling grid ``(N, H, W, 2)`` (or ``(N, D, H, W, 3)``) of the affine maps ``theta``
    ``(N, 2, 3)`` (``(N, 3, 4)``) over an output of ``size``, in ``[-1, 1]`` coordinates."""
    if align_corners is None:
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(s) for s in size]
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {list(theta.shape)}.")
        n, _, h, w = size
        axes = [_base_coords(w, align_corners), _base_coords(h, align_corners)]
        grid_shape = (h, w)
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {list(theta.shape)}.")
        n, _, dd, h, w = size
        axes = [_base_coords(w, align_corners), _base_coords(h, align_corners), _base_coords(dd, align_corners)]
        grid_shape = (dd, h, w)
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine "
                                  f"transforms, respectively. Got size {size}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != n:
        raise ValueError(f"Expected theta batch {theta.shape[0]} to match size batch {n}")
    mesh = np.meshgrid(*reversed(axes), indexing="ij")[::-1]  # x (w) first
    base = np.stack([*mesh, np.ones(grid_shape)], axis=-1).reshape(-1, len(axes) + 1)
    base_t = Tensor._make(base.astype(theta._data.dtype))
    out = base_t.matmul(theta.transpose(1, 2))  # (N, P, dims)
    return out.reshape(n, *grid_shape, len(axes))


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    return (coord + 1) * ((size - 1) / 2) if align_corners else ((coord + 1) * size - 1) / 2


def _reflect(coord: Tensor, lo2: int, hi2: int) -> Tensor:
    """Reflect coordinates into ``[lo2/2, hi2/2]`` (PyTorch's reflect_coordinates)."""
    if lo2 == hi2:
        return coord * 0
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    x = (coord - lo).abs()
    flips = np.floor(x._data / span)
    extra = x - Tensor._make(flips * span)
    even = Tensor._make(np.fmod(flips, 2) == 0)
    return _ew.where(even, extra + lo, span - extra + lo)


def _compute_coord(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    coord = _unnormalize(coord, size, align_corners)
    if padding_mode == "border":
        coord = coord.clamp(0, size - 1)
    elif padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
        coord = coord.clamp(0, size - 1)
    return coord


def _gather_corner(flat: Tensor, idx: list, sizes: list, valid_too: bool = True) -> Tensor:
    """Values of ``flat`` ``(N, C, prod(sizes))`` at integer positions ``idx`` (one int
    array ``(N, P)`` per dim, x first), zero where out of range."""
    n, c = flat.shape[0], flat.shape[1]
    inside = np.ones(idx[0].shape, dtype=bool)
    lin = np.zeros(idx[0].shape, dtype=np.int64)
    stride = 1
    for ix, s in zip(idx, sizes):
        inside &= (ix >= 0) & (ix < s)
        lin += np.clip(ix, 0, s - 1) * stride
        stride *= s
    index = Tensor._make(np.broadcast_to(lin[:, None, :], (n, c, lin.shape[1])).copy())
    vals = flat.gather(2, index)
    if inside.all():
        return vals
    return vals * Tensor._make(inside[:, None, :].astype(flat._data.dtype))


class LinearSample(Function):
    """Bilinear (trilinear) sampling of ``flat`` ``(N, C, prod(sizes))`` at pixel
    coordinates ``coords`` (one ``(N, P)`` tensor per dim, x first), zero outside. Backward:
    the input gradient by one ``np.bincount`` per corner, the coordinate gradients from the
    corner values and the derivative of each corner's weight."""

    _raw = True

    @staticmethod
    def forward(ctx, flat, sizes, *coords):
        v = flat._data
        n, c, _ = v.shape
        cs = [cd._data for cd in coords]
        base = [np.floor(a).astype(np.int64) for a in cs]
        frac = [(a - b).astype(v.dtype) for a, b in zip(cs, base)]
        corners = []
        out = np.zeros((n, c, cs[0].shape[1]), dtype=v.dtype)
        for corner in np.ndindex(*(2,) * len(cs)):
            inside = np.ones(base[0].shape, dtype=bool)
            lin = np.zeros(base[0].shape, dtype=np.int64)
            stride = 1
            for b, k, s in zip(base, corner, sizes):
                pos = b + k
                inside &= (pos >= 0) & (pos < s)
                lin += np.clip(pos, 0, s - 1) * stride
                stride *= s
            vals = np.take_along_axis(v, lin[:, None, :], axis=2) * inside[:, None, :]
            weight = np.ones_like(frac[0])
            for f, k in zip(frac, corner):
                weight = weight * (f if k else 1 - f)
            out += vals * weight[:, None, :]
            corners.append((corner, lin, inside, vals))
        ctx.corners, ctx.frac, ctx.shape = corners, frac, v.shape
        return out

    @staticmethod
    def backward(ctx, grad):
        results = numpy_backward("grid_sample", lambda g: _linear_sample_backward(ctx, g), grad)
        return (results[0], None, *results[1:])


def _linear_sample_backward(ctx: LinearSample, g: np.ndarray) -> tuple:
    n, c, plane = ctx.shape
    frac = ctx.frac
    d = len(frac)
    need_input = ctx.needs_input_grad[0]
    g_input = np.zeros(n * c * plane, dtype=np.float64) if need_input else None
    g_coords = [np.zeros_like(frac[0]) for _ in range(d)]
    rows = (np.arange(n * c) * plane).reshape(n, c, 1)
    for corner, lin, inside, vals in ctx.corners:
        factors = [f if k else 1 - f for f, k in zip(frac, corner)]
        weight = np.prod(factors, axis=0)
        if need_input:
            w = g * (weight * inside)[:, None, :]
            g_input += np.bincount((rows + lin[:, None, :]).ravel(), w.ravel(), minlength=n * c * plane)
        gv = (g * vals).sum(axis=1)  # (N, P): the corner's value times the incoming gradient
        for i in range(d):
            others = np.prod([factors[j] for j in range(d) if j != i], axis=0) if d > 1 else 1.0
            g_coords[i] += gv * others * (1 if corner[i] else -1)
    gi = g_input.astype(g.dtype).reshape(n, c, plane) if need_input else None
    return (gi, *(gc if need else None for gc, need in zip(g_coords, ctx.needs_input_grad[2:])))


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` ``(N, C, H, W)`` (or ``(N, C, D, H, W)``) at the ``[-1, 1]``
    locations of ``grid`` ``(N, H_out, W_out, 2)`` (``(N, D_out, H_out, W_out, 3)``,
    x first). Differentiable in both ``input`` and ``grid``.

    Args:
        mode: ``'bilinear'`` (trilinear for 5-D), ``'nearest'`` or ``'bicubic'`` (4-D only).
        padding_mode: ``'zeros'``, ``'border'`` or ``'reflection'`` for locations outside.
        align_corners: -1 and 1 are the centres (True) or the outer edges (False, default)
            of the corner pixels.
    """
    if mode not in GRID_SAMPLE_INTERPOLATION_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
                         f"'bicubic', but got: '{mode}'")
    if padding_mode not in GRID_SAMPLE_PADDING_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', "
                         f"or 'reflection', but got: '{padding_mode}'")
    align_corners = bool(align_corners)
    d = input.ndim - 2
    if d not in (2, 3) or grid.ndim != input.ndim or grid.shape[-1] != d:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of "
                           f"dimensions, but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if mode == "bicubic" and d != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    n, c = input.shape[0], input.shape[1]
    sizes = [input.shape[-1 - i] for i in range(d)]  # x (W), y (H), z (D)
    out_spatial = tuple(grid.shape[1:-1])
    flat = input.reshape(n, c, -1)
    g = grid.reshape(n, -1, d)
    coords = [g[:, :, i] for i in range(d)]
    if mode == "bicubic":
        coords = [_unnormalize(cd, s, align_corners) for cd, s in zip(coords, sizes)]
    else:
        coords = [_compute_coord(cd, s, padding_mode, align_corners) for cd, s in zip(coords, sizes)]
    if mode == "nearest":
        idx = [np.rint(cd._data).astype(np.int64) for cd in coords]  # round half to even, as PyTorch
        out = _gather_corner(flat, idx, sizes)
    elif mode == "bilinear":
        out = LinearSample.apply(flat, sizes, *coords)
    else:
        out = _bicubic_sample(flat, coords, sizes, padding_mode, align_corners)
    return out.reshape(n, c, *out_spatial)


def _bicubic_sample(flat: Tensor, coords: list, sizes: list, padding_mode: str,
                    align_corners: bool) -> Tensor:
    """Bicubic grid sampling: 16 taps with Keys' weights; taps outside follow padding_mode."""
    base = [np.floor(cd._data).astype(np.int64) for cd in coords]
    t = [cd - Tensor._make(b.astype(cd._data.dtype)) for cd, b in zip(coords, base)]
    wx, wy = (_cubic_weights(tt) for tt in t)
    out = None
    for j in range(4):
        for i in range(4):
            ix, iy = base[0] + i - 1, base[1] + j - 1
            if padding_mode != "zeros":
                ix, iy = (_pad_index(v, s, padding_mode, align_corners) for v, s in zip((ix, iy), sizes))
            term = _gather_corner(flat, [ix, iy], sizes) * (wx[i] * wy[j]).unsqueeze(1)
            out = term if out is None else out + term
    return out


def _pad_index(ix: np.ndarray, size: int, padding_mode: str, align_corners: bool) -> np.ndarray:
    """Integer tap position under ``border``/``reflection`` padding (bicubic taps)."""
    x = ix.astype(np.float64)
    if padding_mode == "reflection":
        x = _reflect(Tensor._make(x), 0, 2 * (size - 1))._data if align_corners else \
            _reflect(Tensor._make(x), -1, 2 * size - 1)._data
    return np.clip(x, 0, size - 1).astype(np.int64)
