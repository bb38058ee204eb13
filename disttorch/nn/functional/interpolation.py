"""``interpolate`` (and the deprecated ``upsample``, ``upsample_nearest``,
``upsample_bilinear``): nearest, nearest-exact, linear, bilinear, bicubic, trilinear and
area resizing with PyTorch's source-coordinate rules (``align_corners``, ``scale_factor``,
``recompute_scale_factor``), and anti-aliased bilinear, bicubic and lanczos resizing of
images (``antialias=True``, ``_antialias.py``).

Interpolation is separable: each spatial dim is resampled in turn by one ``AxisTaps`` op
that gathers its few neighbouring rows (1 for nearest, 2 for linear, 4 for cubic) and sums
them with per-position weights; its backward adds the gradient back with one segmented
sum per tap, never a loop over pixels. ``'area'`` is adaptive average pooling.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import _native_warnings
from ..._dtype import float32, scalar_type_name
from ..._tensor import Tensor
from ...autograd.function import named_node
from ...ops.opmath import is_low
from ._antialias import antialias_gather, antialias_taps, resize_uint8
from ._axis_taps import AxisTaps
from ._channels_last import keeps_channels_last
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

__all__ = ["interpolate", "upsample", "upsample_bilinear", "upsample_nearest"]


_DIMS_OF_MODE = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3, "lanczos": 2}

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "lanczos", "area", "nearest-exact")


def _output_geometry(
    shape: tuple, d: int, size: Any, scale_factor: Any, recompute_scale_factor: bool | None
) -> tuple:
    """(output sizes, scales used for source coordinates or None per dim), as PyTorch."""
    spatial = shape[2:]
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = list(size) if isinstance(size, (list, tuple)) else [size] * max(d, 0)
        if isinstance(size, (list, tuple)) and len(sizes) != d:
            raise ValueError(
                f"Input and output must have the same number of spatial dimensions, but "
                f"got input with spatial dimensions of {list(spatial)} and output size of "
                f"{list(sizes)}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                f"format and output size in (o1, o2, ...,oK) format."
            )
        return tuple(int(s) if _is_int(s) else s for s in sizes), (None,) * max(d, 0)
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    scales = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor] * max(d, 0)
    if isinstance(scale_factor, (list, tuple)) and len(scales) != d:
        raise ValueError(
            f"Input and scale_factor must have the same number of spatial dimensions, but "
            f"got input with spatial dimensions of {list(spatial)} and scale_factor of "
            f"shape {list(scales)}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
            f"format and scale_factor in (s1, s2, ...,sK) format."
        )
    sizes = tuple(math.floor(float(n) * float(s)) for n, s in zip(spatial, scales))
    used = (None,) * max(d, 0) if recompute_scale_factor else tuple(float(s) for s in scales)
    return sizes, used


def _is_int(n: Any) -> bool:
    return isinstance(n, (int, np.integer)) and not isinstance(n, bool)


def _source(
    out: int, size: int, scale: float | None, align_corners: bool, cubic: bool, opmath: type = np.float64
) -> np.ndarray:
    """Source coordinate of each output position for the linear/cubic modes, computed in
    ``opmath`` (float32 for 16-bit input, as PyTorch's kernels)."""
    dst = np.arange(out, dtype=opmath)
    if align_corners:
        return dst * (opmath(size - 1) / opmath(out - 1)) if out > 1 else np.zeros(out, opmath)
    ratio = opmath(1.0 / scale) if scale is not None and scale > 0 else opmath(size) / opmath(out)
    src = (dst + opmath(0.5)) * ratio - opmath(0.5)
    return src if cubic else np.maximum(src, opmath(0))


def _cubic_weights(t: np.ndarray, a: float = -0.75) -> list:
    """Keys' cubic convolution weights of the four taps at offsets -1, 0, 1, 2."""

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _axis_taps(
    size: int, out: int, mode: str, scale: float | None, align_corners: bool, opmath: type = np.float64
) -> list:
    """``[(indices, weights or None), ...]`` resampling ``size`` positions to ``out``, the
    linear and cubic weights computed in ``opmath``."""
    if mode in ("nearest", "nearest-exact"):
        ratio = 1.0 / scale if scale is not None and scale > 0 else size / out
        offset = 0.5 if mode == "nearest-exact" else 0.0
        return [(np.minimum(np.floor((np.arange(out) + offset) * ratio).astype(np.int64), size - 1), None)]
    cubic = mode == "bicubic"
    src = _source(out, size, scale, align_corners, cubic, opmath)
    base = np.floor(src).astype(np.int64)
    t = src - base
    if cubic:
        return [(np.clip(base + k, 0, size - 1), w) for k, w in zip((-1, 0, 1, 2), _cubic_weights(t))]
    base = np.minimum(base, size - 1)
    return [(base, 1.0 - t), (np.minimum(base + 1, size - 1), t)]


def _rounded_weights(taps: list, dtype: np.dtype) -> list:
    """The linear or cubic ``taps`` with the weights a 16-bit kernel stores: each rounded
    to ``dtype``, a linear pair's first one then ``1 - w1`` of the rounded second."""
    weights = [w.astype(np.float32).astype(dtype).astype(np.float32) for _, w in taps]
    if len(taps) == 2:
        weights[0] = (np.float32(1) - weights[1]).astype(dtype).astype(np.float32)
    return [(index, w) for (index, _), w in zip(taps, weights)]


#: the name of PyTorch's upsampling kernel for each mode (its node: ``UpsampleBilinear2DBackward0``)
_NODE_OF_MODE = {
    "nearest": "Nearest",
    "nearest-exact": "NearestExact",
    "linear": "Linear",
    "bilinear": "Bilinear",
    "bicubic": "Bicubic",
    "trilinear": "Trilinear",
    "lanczos": "Lanczos",
}


@keeps_channels_last
def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize ``(N, C, *spatial)`` (1-3 spatial dims) to ``size`` or by ``scale_factor``.

    Args:
        mode: ``'nearest'``, ``'nearest-exact'``, ``'linear'`` (3-D input), ``'bilinear'``
            (4-D), ``'bicubic'`` (4-D), ``'trilinear'`` (5-D), ``'lanczos'`` (4-D, with
            ``antialias=True``) or ``'area'``.
        align_corners: linear/cubic modes only: map the corner pixels' centres onto each
            other (True) or the corners of the pixel grid (False, the default).
        recompute_scale_factor: compute the source coordinates from the output size
            instead of the given ``scale_factor``.
        antialias: bilinear, bicubic and lanczos modes of 4-D float32/float64/uint8 input:
            when shrinking, widen the filter over every input pixel an output pixel covers
            (the result matches PIL's resizing with ``align_corners=False``).
    """
    d = input.ndim - 2
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    sizes, scales = _output_geometry(tuple(input.shape), d, size, scale_factor, recompute_scale_factor)
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
            "4-D tensor as input"
        )
    if mode == "lanczos" and d == 2:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if (
        d in (1, 2, 3)
        and mode in _DIMS_OF_MODE
        and _DIMS_OF_MODE[mode] != d
        and mode not in ("bicubic", "lanczos")
    ):
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {_DIMS_OF_MODE[mode] + 2}D input"
        )
    if d not in (1, 2, 3) or mode not in _MODES or _DIMS_OF_MODE.get(mode, d) != d:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            f"the modes: {' | '.join(_MODES)} (got {mode})"
        )
    if isinstance(size, float) or (isinstance(size, (list, tuple)) and not all(_is_int(n) for n in size)):
        raise TypeError(f"expected size to be one of int or Tuple[int], but got size {size!r}")
    if any(s <= 0 for s in sizes) and mode != "area":
        raise RuntimeError(
            f"Input and output sizes should be greater than 0, but got input "
            f"({', '.join(map(str, input.shape[2:]))}) output ({', '.join(map(str, sizes))})"
        )
    if mode == "area":
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[d - 1](input, sizes)
    if antialias:
        return _antialiased(input, sizes, mode, scales, bool(align_corners))
    if input._data.dtype.kind in "biu":
        return _resized_integers(input, sizes, mode, scales, bool(align_corners))
    axes = [
        i
        for i in range(d)
        if sizes[i] != input.shape[2 + i] or scales[i] not in (None, 1.0) or mode == "bicubic"
    ]
    if not axes:
        return input.clone()
    # float16 and bfloat16 resample in float32 and round once, both ways, as PyTorch's
    # kernels accumulate (its backward sums every tap of every dim before rounding); its
    # forward multiplies by weights stored in the input's dtype and nests the dims, the
    # last one innermost (bilinear's own kernel keeps float32 weights)
    dtype = input._data.dtype
    low = is_low(dtype)
    out = input.to(float32) if low else input
    rounded = low and mode in ("linear", "bicubic", "trilinear")
    opmath = np.float32 if rounded else np.float64
    for i in reversed(axes) if rounded else axes:
        taps = _axis_taps(input.shape[2 + i], sizes[i], mode, scales[i], bool(align_corners), opmath)
        out = AxisTaps.apply(out, 2 + i, taps, _rounded_weights(taps, dtype) if rounded else None)
    out = out.to(input.dtype) if low else out
    return named_node(out, f"Upsample{_NODE_OF_MODE[mode]}{d}DBackward0")  # PyTorch's kernel's node


#: the kernel PyTorch names when a mode has no loop for an integer or bool input (uint8
#: has nearest, nearest-exact, bilinear and bicubic)
_INTEGER_KERNEL = {
    "nearest": "compute_indices_weights_nearest",
    "nearest-exact": "compute_indices_weights_nearest",
    "linear": "compute_indices_weights_linear",
    "trilinear": "compute_indices_weights_linear",
    "bilinear": "upsample_bilinear2d_channels_last",
    "bicubic": "compute_indices_weights_cubic",
}


def _resized_integers(input: Tensor, sizes: tuple, mode: str, scales: tuple, align_corners: bool) -> Tensor:
    """Resizing of an integer or bool input, which PyTorch's CPU kernels take only as uint8
    and in the nearest, bilinear and bicubic modes: nearest reads its source pixel, bilinear
    and bicubic sum their taps in fixed point (:func:`._antialias.resize_uint8`), the width
    first, the height then, each rounded to uint8 (bilinear is PyTorch's bitwise, bicubic
    within one unit at a few pixels)."""
    dtype = input._data.dtype
    if dtype != np.uint8 or mode not in ("nearest", "nearest-exact", "bilinear", "bicubic"):
        kernel = _INTEGER_KERNEL[mode]
        if mode == "nearest" and input.ndim == 4:
            kernel = "upsample_nearest2d_channels_last"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(dtype)}'")
    if mode.startswith("nearest"):
        out = input
        for i in range(input.ndim - 2):
            if sizes[i] != input.shape[2 + i] or scales[i] not in (None, 1.0):
                (index, _), *_ = _axis_taps(input.shape[2 + i], sizes[i], mode, scales[i], align_corners)
                out = Tensor._make(np.take(out._data, index, axis=2 + i))
        return out if out is not input else input.clone()

    def gather(size: int, out: int, scale: float | None) -> tuple:
        taps = _axis_taps(size, out, mode, scale, align_corners)
        return tuple(np.stack([np.broadcast_to(t[k], (out,)) for t in taps], 1) for k in (0, 1))

    return _resized_uint8(input, sizes, scales, gather, every_axis=mode == "bicubic")


def _resized_uint8(
    input: Tensor, sizes: tuple, scales: tuple, gather: Any, every_axis: bool = False
) -> Tensor:
    """``(N, C, H, W)`` uint8 resized in fixed point, the width then the height, each axis
    whose size changes (or ``every_axis``), with the taps ``gather(size, out, scale)`` gives
    as ``(indices, weights)``; no gradient."""
    data = input._data
    for axis in (3, 2):
        if sizes[axis - 2] != data.shape[axis] or every_axis:
            data = resize_uint8(data, axis, *gather(data.shape[axis], sizes[axis - 2], scales[axis - 2]))
    return Tensor._make(data if data is not input._data else data.copy())


def _antialiased(input: Tensor, sizes: tuple, mode: str, scales: tuple, align_corners: bool) -> Tensor:
    """Anti-aliased resizing of ``(N, C, H, W)``: the width, then the height (PyTorch's
    order, which decides the float rounding), each only if its size changes."""
    dtype = input._data.dtype
    if dtype == np.uint8:  # fixed point; no gradient
        return _resized_uint8(
            input,
            sizes,
            scales,
            lambda size, out, scale: antialias_gather(size, out, mode, scale, align_corners),
        )
    if dtype not in (np.float32, np.float64):
        raise NotImplementedError(
            f"\"compute_index_ranges_weights\" not implemented for '{input.dtype.scalar_name}'"
        )
    out = input
    for axis in (3, 2):
        size = input.shape[axis]
        if sizes[axis - 2] != size:
            taps = antialias_taps(size, sizes[axis - 2], mode, scales[axis - 2], align_corners, dtype)
            out = AxisTaps.apply(out, axis, taps)
    if out is input:
        return input.clone()
    return named_node(out, f"Upsample{_NODE_OF_MODE[mode]}2DAaBackward0")


def upsample(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated alias of :func:`interpolate` (warns, as PyTorch)."""
    _native_warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    _native_warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead."
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    _native_warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead."
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
