"""``affine_grid`` and ``grid_sample`` (spatial transformers): sampling grids of affine
maps, and sampling an input at grid locations with bilinear/trilinear, nearest or bicubic
interpolation and zeros/border/reflection padding.

The coordinate transforms (unnormalising, clamping, reflecting) are one op,
``SourceCoord``, with PyTorch's rounding and derivatives (a clamped coordinate on the
border itself gets none), so the gradient reaches the grid through it as in PyTorch.
Bilinear/trilinear sampling is one ``LinearSample`` op (input gradient by ``np.bincount``,
coordinate gradient in closed form); nearest and bicubic sampling gather with
``Tensor.gather``. ``affine_grid`` builds its base grid in the output dtype as PyTorch
does, so identity maps land exactly on pixel centres in both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ... import _native_warnings
from ..._linspace import linspace_values
from ..._tensor import Tensor
from ...autograd.autocast_state import autocast_op
from ...autograd.forward_ad import refuse_tangents
from ...autograd.function import Function, named_node
from ...autograd.grad_reads import reads_inputs
from ...kernels.fma import fma
from ...kernels.small_bmm import is_small_bmm, small_bmm
from ...kernels.threads import matmul as blas_matmul
from ...ops.dtype_rules import require_same_scalar_type
from ...ops.flat import flat as zero_gradient
from ._numpy_backward import numpy_backward
from .interpolation import _cubic_weights

__all__ = ["GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES", "affine_grid", "grid_sample"]

GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


def _base_coords(n: int, align_corners: bool, dtype: np.dtype) -> np.ndarray:
    """The ``n`` centres of an axis in ``[-1, 1]`` coordinates, computed in ``dtype`` as
    PyTorch computes them (its ``linspace``, then ``* (n - 1) / n``), so a grid point lands
    on the same side of a pixel centre as in PyTorch (where ``grid_sample``'s gradient
    changes)."""
    if n <= 1:
        return np.zeros(1, dtype)
    c = linspace_values(-1.0, 1.0, n, dtype)
    return c if align_corners else c * dtype.type(n - 1) / dtype.type(n)


def _warn_align_corners() -> None:
    """PyTorch's warning when ``affine_grid``/``grid_sample`` are called without
    ``align_corners``, at the program's line that called."""
    _native_warnings.warn(
        "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
        "Please specify align_corners=True if the old behavior is desired. See the documentation of "
        "grid_sample for details."
    )


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """Sampling grid ``(N, H, W, 2)`` (or ``(N, D, H, W, 3)``) of the affine maps ``theta``
    ``(N, 2, 3)`` (``(N, 3, 4)``) over an output of ``size``, in ``[-1, 1]`` coordinates."""
    if align_corners is None:
        _warn_align_corners()
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(s) for s in size]
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                f"Got {list(theta.shape)}."
            )
        n, _, h, w = size
        axes = [_base_coords(s, align_corners, theta._data.dtype) for s in (w, h)]
        grid_shape = (h, w)
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                f"Got {list(theta.shape)}."
            )
        n, _, dd, h, w = size
        axes = [_base_coords(s, align_corners, theta._data.dtype) for s in (w, h, dd)]
        grid_shape = (dd, h, w)
    else:
        raise NotImplementedError(
            f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine "
            f"transforms, respectively. Got size {size}."
        )
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != n:
        raise ValueError(f"Expected theta batch {theta.shape[0]} to match size batch {n}")
    mesh = np.meshgrid(*reversed(axes), indexing="ij")[::-1]  # x (w) first
    base = np.stack([*mesh, np.ones(grid_shape, mesh[0].dtype)], axis=-1).reshape(-1, len(axes) + 1)
    return _grid_points(theta, base[None], (n, *grid_shape, len(axes)))


class AffineGridGenerator(Function):
    """The grid's points ``base @ theta^T`` (``(1, P, dims + 1) @ (N, dims + 1, dims)``) in
    the grid's ``shape``, differentiable in ``theta``: ``g^T @ base``. The base grid is a constant kept on the node,
    not a saved tensor, so that (as PyTorch's node, which saves nothing) a graph through the
    grid may be walked again after a backward."""

    _raw = True
    _node_name = "AffineGridGeneratorBackward0"

    @staticmethod
    def forward(ctx, theta, base, shape):
        ctx.base = base = base.astype(theta._data.dtype, copy=False)  # (autocast may have cast theta)
        x, y = base, np.swapaxes(theta._data, 1, 2)
        points = (
            small_bmm(x, y) if is_small_bmm(x, y) else blas_matmul(x, y)
        )  # PyTorch's bmm, small ones in its order
        return points.reshape(shape)

    @staticmethod
    def backward(ctx, g):
        g = g.reshape(g.shape[0], -1, g.shape[-1])
        return g.transpose(1, 2).matmul(Tensor._make(ctx.base)), None, None


@autocast_op("lower")
def _grid_points(theta: Tensor, base: np.ndarray, shape: tuple) -> Tensor:
    """:class:`AffineGridGenerator` in autocast's lower precision, as PyTorch's bmm inside it."""
    return AffineGridGenerator.apply(theta, base, shape)


def _unnormalize(coord: np.ndarray, size: int, align_corners: bool, planar: bool) -> tuple:
    """``(pixel coordinate, its derivative)`` of a ``[-1, 1]`` grid coordinate: ``(c + 1) *
    (size - 1) / 2`` (align_corners) or ``((c + 1) * size - 1) / 2``, rounded as PyTorch's
    kernels round them, so that a point at a pixel centre stays on the same side of it
    (where the gradient jumps): its 2-D kernel computes ``(c + 1) * scale`` and
    ``fma(c + 1, size / 2, -1/2)``, its 3-D kernel the formulas as written."""
    ft = coord.dtype.type
    scale = ft((size - 1) / 2) if align_corners else ft(size / 2)
    shifted = coord + ft(1)
    if planar:
        value = shifted * scale if align_corners else fma(shifted, scale, ft(-0.5))
    else:
        value = shifted / ft(2) * ft(size - 1) if align_corners else (shifted * ft(size) - ft(1)) / ft(2)
    return value, scale


def _reflect(x: np.ndarray, lo2: int, hi2: int) -> tuple:
    """``(x reflected into [lo2/2, hi2/2], derivative +-1)``, PyTorch's
    ``reflect_coordinates`` (a zero span gives zeros)."""
    if lo2 == hi2:
        return np.zeros_like(x), np.zeros_like(x)
    ft = x.dtype.type
    lo, span = ft(lo2 / 2), ft((hi2 - lo2) / 2)
    x = x - lo
    sign = np.where(x < 0, ft(-1), ft(1))
    x = np.abs(x)
    extra = np.fmod(x, span)
    even = np.floor(x / span) % 2 == 0
    return np.where(even, extra + lo, span - extra + lo), np.where(even, sign, -sign)


def _clip(x: np.ndarray, size: int) -> tuple:
    """``(x clamped to [0, size - 1], derivative)``: PyTorch counts the borders themselves
    as outside (derivative 0 there), unlike ``clamp``."""
    ft = x.dtype.type
    return np.clip(x, ft(0), ft(size - 1)), ((x > 0) & (x < size - 1)).astype(x.dtype)


class SourceCoord(Function):
    """Pixel coordinates of grid coordinates (of a 2-D grid if ``planar``, else 3-D) along
    one axis of ``size`` pixels, padded
    (``'zeros'``: as they are; ``'border'``: clamped; ``'reflection'``: reflected, then
    clamped); the backward multiplies by the derivative PyTorch's kernel uses."""

    _raw = True

    @staticmethod
    def forward(ctx, coord, size, padding_mode, align_corners, planar):
        x, slope = _unnormalize(coord._data, size, align_corners, planar)
        if padding_mode == "reflection":
            x, turn = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
            slope = slope * turn
        if padding_mode in ("border", "reflection"):
            x, inside = _clip(x, size)
            slope = slope * inside
        ctx.slope = slope
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * Tensor._make(np.asarray(ctx.slope, dtype=grad._data.dtype)), None, None, None, None


def _gather_corner(flat: Tensor, idx: list, sizes: list) -> Tensor:
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
        ctx.corners, ctx.frac, ctx.shape, ctx.base = corners, frac, v.shape, base
        ctx.save_for_backward(flat, *coords)
        return out

    @staticmethod
    def backward(ctx, grad):
        flat, *coords = ctx._checked_saved()
        results = numpy_backward(
            "grid_sample",
            lambda g: _linear_sample_backward(ctx, g),
            grad,
            flat,
            *coords,
            in_tensor_ops=lambda g: _linear_sample_backward_in_tensor_ops(ctx, g, flat, coords),
        )
        return (results[0], None, *results[1:])


def _linear_sample_backward_in_tensor_ops(ctx: LinearSample, g: Tensor, flat: Tensor, coords: list) -> tuple:
    """The backward below in tensor ops of ``g``, ``flat`` and the coordinates, for a recorded
    pass (second derivatives, as PyTorch's ``grid_sampler_2d_backward`` has): each corner's
    weight a product of the coordinates' fractional parts (their integer parts constants)."""
    n, c, plane = ctx.shape
    frac = [cd - Tensor._make(b.astype(cd._data.dtype)) for cd, b in zip(coords, ctx.base)]
    d = len(frac)
    g_input = Tensor._make(np.zeros((n, c, plane), dtype=g._data.dtype))
    g_coords: list = [None] * d
    for corner, lin, inside, _ in ctx.corners:
        factors = [f if k else 1 - f for f, k in zip(frac, corner)]
        keep = Tensor._make(inside.astype(g._data.dtype))
        weight = factors[0]
        for f in factors[1:]:
            weight = weight * f
        index = Tensor._make(np.broadcast_to(lin[:, None, :], (n, c, lin.shape[1])).copy())
        g_input = g_input.scatter_add(2, index, g * (weight * keep).unsqueeze(1))
        gv = (g * flat.gather(2, index) * keep.unsqueeze(1)).sum(1)  # (N, P)
        for i in range(d):
            term = gv if corner[i] else -gv
            for j in range(d):
                if j != i:
                    term = term * factors[j]
            g_coords[i] = term if g_coords[i] is None else g_coords[i] + term
    return (g_input, *g_coords)


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


@autocast_op("fp32")
def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
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
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in GRID_SAMPLE_PADDING_MODES:
        raise ValueError(
            f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', "
            f"or 'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        _warn_align_corners()
    align_corners = bool(align_corners)
    d = input.ndim - 2
    if d not in (2, 3) or grid.ndim != input.ndim or grid.shape[-1] != d:
        raise RuntimeError(
            f"grid_sampler(): expected 4D or 5D input and grid with same number of "
            f"dimensions, but got input with sizes {list(input.shape)} and grid with sizes "
            f"{list(grid.shape)}"
        )
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(
            f"grid_sampler(): expected grid and input to have same batch size, but got "
            f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if mode == "bicubic" and d != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    require_same_scalar_type(input, grid)
    refuse_tangents(f"grid_sampler_{d}d", input, grid)  # PyTorch has no forward rule
    n, c = input.shape[0], input.shape[1]
    sizes = [input.shape[-1 - i] for i in range(d)]  # x (W), y (H), z (D)
    out_spatial = tuple(grid.shape[1:-1])
    flat = input.reshape(n, c, math.prod(input.shape[2:]))
    g = grid.reshape(n, math.prod(out_spatial), d)
    coords = [g[:, :, i] for i in range(d)]
    padding = "zeros" if mode == "bicubic" else padding_mode  # bicubic pads its taps instead
    coords = [SourceCoord.apply(cd, s, padding, align_corners, d == 2) for cd, s in zip(coords, sizes)]
    if mode == "nearest":
        idx = [np.rint(cd._data).astype(np.int64) for cd in coords]  # round half to even, as PyTorch
        out = _gather_corner(flat, idx, sizes)
        if grid.requires_grad:  # the grid gets a zero gradient, as in PyTorch (not None)
            out = out + zero_gradient(np.zeros((), out._data.dtype), "GridSamplerBackward", grid)
    elif mode == "bilinear":
        out = LinearSample.apply(flat, sizes, *coords)
    else:
        out = _bicubic_sample(flat, coords, sizes, padding_mode, align_corners)
    out = named_node(out.reshape(n, c, *out_spatial), f"GridSampler{len(out_spatial)}DBackward0")
    return reads_inputs(out, "undefined")  # (PyTorch's backward reads the input and the grid)


def _bicubic_sample(
    flat: Tensor, coords: list, sizes: list, padding_mode: str, align_corners: bool
) -> Tensor:
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
        x = _reflect(x, 0, 2 * (size - 1))[0] if align_corners else _reflect(x, -1, 2 * size - 1)[0]
    return np.clip(x, 0, size - 1).astype(np.int64)
