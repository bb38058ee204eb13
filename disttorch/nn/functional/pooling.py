"""Pooling: ``max_pool1d/2d/3d``, ``avg_pool1d/2d/3d``, ``adaptive_avg_pool1d/2d/3d``,
``adaptive_max_pool1d/2d/3d`` and the ``*_with_indices`` forms (one N-d implementation per kind).

Max and average pooling are separable: a window is a product of one index range per
spatial dim, so the max (or sum) over it is taken one dim at a time, each stage a short
loop over that dim's kernel offsets applied to strided slices of the whole array (never a
loop over pixels; with the ``fast`` extra a max stage and its adjoint are one compiled
pass, ``kernels/max_pool.py``). Max pooling keeps, per stage, which offset won (uint8);
backward routes the gradient back through the stages to the winners. Average pooling divides the window
sums by PyTorch's per-window divisor. Adaptive average pooling uses one small averaging
matrix per spatial dim; adaptive max pooling gathers its (ragged) windows and takes one
argmax. Max, average and adaptive pooling, both directions, split the batch over the op's threads
(``kernels.threads.map_rows``): the same numbers for every thread count.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..._dtype import scalar_type_name
from ..._memory_format import contiguous_format, suggest_memory_format
from ..._tensor import Tensor
from ...autograd.autocast_state import autocast_op
from ...autograd.function import Function
from ...kernels import quantize as qk
from ...kernels.max_pool import max_stage, scatter_winners
from ...kernels.threads import map_rows, row_major
from ...kernels.windows import crop_index, pad_spatial, window_along
from ._channels_last import keeps_channels_last
from ._numpy_backward import folded, numpy_backward

__all__ = [
    "max_pool1d",
    "max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "max_pool3d",
    "avg_pool3d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool3d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
]

#: Units of work (``kernels/threads.py``) per input element of a pooling: each window stage
#: compares, keeps the larger and records the winner (or adds), forward and backward alike.
POOL_WORK = 6


def _pool_node(pattern: str, spatial: int) -> str:
    """PyTorch's node for a pooling of ``spatial`` dims: its 2-d or 3-d kernel's, and for 1-d
    the squeeze around the 2-d kernel it calls."""
    return "SqueezeBackward1" if spatial == 1 else pattern.format(spatial)


class _PoolGeometry(NamedTuple):
    kernel: tuple
    stride: tuple
    dilation: tuple
    pads: tuple  # ((lo, hi), ...): hi includes the extra room ceil_mode needs
    out: tuple
    unbatched: bool


def _tuple(value: Any, d: int, what: str, name: str) -> tuple:
    if isinstance(value, (int, np.integer)):
        return (int(value),) * d
    t = tuple(int(v) for v in value)
    if len(t) == 1:
        return t * d
    if len(t) != d:
        raise RuntimeError(f"{name}: {what} must either be a single int, or a tuple of {d} ints")
    return t


def _rank_error(x: np.ndarray, d: int, name: str) -> Exception:
    """PyTorch's error for an input of ``name`` (a pooling op over ``d`` dims) of another rank
    than ``d + 1`` or ``d + 2``: each kernel words it its own way."""
    if name in ("avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d"):
        return RuntimeError(
            f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for argument #1 'self' "
            f"(while checking arguments for {name})"
        )
    if name == "max_pool1d":
        return RuntimeError(
            f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, "
            f"but got:{list(x.shape)}"
        )
    if name == "avg_pool2d" and x.ndim < 3:  # (its shape arithmetic reads dim -3 first)
        return IndexError(
            f"Dimension out of range (expected to be in range of [{-max(x.ndim, 1)}, "
            f"{max(x.ndim, 1) - 1}], but got -3)"
        )
    if name in ("max_pool2d", "max_pool3d", "avg_pool2d", "avg_pool3d"):
        return RuntimeError(f"non-empty {d + 1}D or {d + 2}D (batch mode) tensor expected for input")
    if name == "adaptive_max_pool2d":
        return RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {list(x.shape)}")
    return RuntimeError(f"{name}(): Expected {d + 1}D or {d + 2}D tensor, but got {list(x.shape)}")


def _check_input(x: np.ndarray, d: int, name: str) -> bool:
    """Raise unless ``x`` is ``(C, *spatial)`` or ``(N, C, *spatial)``; True if unbatched."""
    if x.ndim not in (d + 1, d + 2):
        raise _rank_error(x, d, name)
    if x.size == 0 and x.ndim == d + 1:
        raise RuntimeError(
            f"{name}: Expected {d + 1}D or {d + 2}D (batch mode) tensor for input, "
            f"but got input of size: {list(x.shape)}"
        )
    return x.ndim == d + 1


def _geometry(
    x: np.ndarray,
    d: int,
    name: str,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
) -> _PoolGeometry:
    """PyTorch's pooling output size (with ``ceil_mode``) and argument checks."""
    unbatched = _check_input(x, d, name)
    kernel = _tuple(kernel_size, d, "kernel_size", name)
    stride = (
        kernel
        if stride is None or (not isinstance(stride, int) and len(stride) == 0)
        else _tuple(stride, d, "stride", name)
    )
    pad = _tuple(padding, d, "padding", name)
    dil = _tuple(dilation, d, "dilation", name)
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"{name}: kernel_size must be greater than zero, but got {list(kernel)}")
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(v <= 0 for v in dil):
        raise RuntimeError(f"dilation should be greater than zero, but got dilation {list(dil)}")
    spatial = x.shape[-d:]
    out, pads, kept = [], [], []
    for size, k, s, p, dl in zip(spatial, kernel, stride, pad, dil):
        span = dl * (k - 1) + 1
        if name == "max_pool1d" and p > k // 2:  # (its own check, on the kernel size alone)
            raise RuntimeError(
                f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and kernel_size={k}"
            )
        if p > span // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got "
                f"pad={p}, kernel_size={k} and dilation={dl}"
            )
        num = size + 2 * p - span
        o = (-(-num // s) if ceil_mode else num // s) + 1
        if ceil_mode and (o - 1) * s >= size + p:
            o -= 1  # the last window must start inside the input or its left padding
        if o == 1 and dl == 1 and k > size + 2 * p:
            # one window larger than the padded input (ceil_mode; EfficientNet pools a 1x1
            # map with a 2560 kernel): it sees the padded input, and padding it to the
            # kernel's size would take kernel**d elements per channel
            k = span = size + 2 * p
        out.append(o)
        kept.append(k)
        pads.append((p, max(p, (o - 1) * s + span - size - p)))
    kernel = tuple(kept)
    if any(o <= 0 for o in out):
        c = x.shape[-d - 1]
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, (c,) + spatial))}). Calculated "
            f"output size: ({'x'.join(map(str, [c] + out))}). Output size is too small"
        )
    return _PoolGeometry(kernel, stride, dil, tuple(pads), tuple(out), unbatched)


# ---------------------------------------------------------------------- separable stages
# A window is a product of one index range per spatial dim, so max and sum over a window
# can be taken one dim at a time: reduce dim 0 over its kernel offsets (strided slices of
# whole rows, long contiguous inner loops), then dim 1 on the smaller result, and so on.
def _stages(geo: _PoolGeometry) -> list:
    """``(axis, kernel, stride, dilation, out)`` of each spatial dim, in reduction order: the
    last dim first, so that among equal maxima the first in row-major order wins (each stage
    keeps the first; the last stage, over dim 2, then picks the first row holding the max), as
    PyTorch's window scan."""
    return [
        (2 + i, k, s, d, o)
        for i, (k, s, d, o) in reversed(list(enumerate(zip(geo.kernel, geo.stride, geo.dilation, geo.out))))
    ]


def _scatter_stage(g: np.ndarray, in_shape: tuple, stage: tuple) -> np.ndarray:
    """Adjoint of one stage of window sums: send ``g`` back to every kernel offset it came
    from (max pooling's stages have ``kernels.max_pool.scatter_winners``)."""
    axis, kernel, stride, dil, out = stage
    ga = np.zeros(in_shape, dtype=g.dtype)
    for k in range(kernel):
        ga[window_along(axis, k, stride, dil, out)] += g
    return ga


# ---------------------------------------------------------------------- max pooling
class MaxPoolNd(Function):
    """Max over each window, one spatial dim at a time; keeps, per stage, which kernel
    offset won (``uint8``). Returns ``(values, *winners)`` (winners get no gradient)."""

    _raw = True
    _grad_reads = "zero"
    _profiled_as = staticmethod(lambda input, geo: f"aten::max_pool{len(geo.kernel)}d")

    @staticmethod
    def forward(ctx, input, geo):
        x = input._data[None] if geo.unbatched else input._data
        if x.dtype.kind not in "fV":
            raise RuntimeError(f"max pooling expects a floating point input, got {x.dtype}")
        values, *winners = map_rows(
            lambda rows, out: _max_pool_rows(rows, geo, out), x, work=POOL_WORK * x.size, into=True
        )
        ctx.winners, ctx.geo, ctx.in_shape = winners, geo, x.shape
        if (
            suggest_memory_format(x) is contiguous_format
        ):  # row-major, as PyTorch's (a transposed input's stages are not)
            values = row_major(values)
        ctx._node_name = _pool_node("MaxPool{}DWithIndicesBackward0", len(geo.kernel))
        ctx.set_materialize_grads(False)  # the winners never get a gradient: no zero arrays
        return (values[0] if geo.unbatched else values,) + tuple(winners)

    @staticmethod
    def backward(ctx, grad, *_winners):
        if grad is None:
            return None, None
        return numpy_backward(
            "max_pool",
            lambda g: (_max_pool_backward(ctx, g),),
            grad,
            jvp=lambda t: _max_pool_jvp(ctx, t),
            batched=folded(lambda g, *won: (_max_pool_grad(ctx, g, won),), ctx.geo.unbatched, *ctx.winners),
        )[0], None


def _max_pool_rows(x: np.ndarray, geo: _PoolGeometry, out: tuple | None = None) -> tuple:
    """``(values, *winners)`` of max pooling the images ``x``, one stage per spatial dim
    (written into ``out``, arrays of those shapes, when given)."""
    a = pad_spatial(x, geo.pads, -np.inf)
    stages = _stages(geo)
    winners = []
    for s, (axis, kernel, stride, dil, size) in enumerate(stages):
        into = (None, None) if out is None else (out[0] if s == len(stages) - 1 else None, out[1 + s])
        a, arg = max_stage(a, axis, kernel, stride, dil, size, *into)
        first = _first_inside(arg.ndim - axis, kernel, stride, dil, size, geo.pads[axis - 2][0])
        if first is not None:  # a window of -inf ties with its left padding: the input wins
            np.maximum(arg, first, out=arg)
        winners.append(arg)
    return (a, *winners)


def _first_inside(dims: int, kernel: int, stride: int, dil: int, out: int, lo: int) -> np.ndarray | None:
    """The first kernel offset of each of the ``out`` windows along an axis (the ``dims``-th
    from the end) that is not left padding (``uint8``, shaped to broadcast against a
    stage's winners), or None without left padding. Padding is -inf and the first maximum
    wins, so a window whose input is all -inf would pick the padding; PyTorch's kernel
    starts from the first element inside."""
    if lo == 0:
        return None
    starts = np.arange(out) * stride
    first = np.minimum(np.maximum(-((starts - lo) // dil), 0), kernel - 1)  # ceil((lo - start) / dil)
    return first.astype(np.uint8).reshape((out,) + (1,) * (dims - 1))


def _stage_shapes(images: tuple, geo: _PoolGeometry) -> list:
    """The array shape each stage reduces, for images of shape ``images`` ``(N, C, *spatial)``."""
    shape = list(images[:2]) + [s + lo + hi for s, (lo, hi) in zip(images[2:], geo.pads)]
    shapes = []
    for axis, *_, out in _stages(geo):
        shapes.append(tuple(shape))
        shape[axis] = out
    return shapes


def _unpad(g: np.ndarray, geo: _PoolGeometry) -> np.ndarray:
    """The gradient of the unpadded input, from that of the padded one."""
    return g[crop_index(tuple(n - lo - hi for n, (lo, hi) in zip(g.shape[2:], geo.pads)), geo.pads)]


def _window_sums(x: np.ndarray, geo: _PoolGeometry) -> np.ndarray:
    """The sum over each window of the images ``x`` (zero padding), one stage per spatial dim."""
    a = pad_spatial(x, geo.pads)
    for axis, kernel, stride, dil, out in _stages(geo):
        total = a[window_along(axis, 0, stride, dil, out)].copy()
        for k in range(1, kernel):
            total += a[window_along(axis, k, stride, dil, out)]
        a = total
    return a


def _max_pool_jvp(ctx: MaxPoolNd, t: Tensor) -> Tensor:
    """Forward-mode rule: the tangent at each window's maximum (a gather, differentiable)."""
    geo = ctx.geo
    d = len(geo.out)
    flat = _flat_indices(ctx.winners, geo, tuple(t.shape[-d:]))  # batched: (N, C, *out)
    if geo.unbatched:
        flat = flat[0]
    planes = t.reshape(tuple(t.shape[:-d]) + (-1,))
    index = Tensor._make(flat.reshape(flat.shape[: flat.ndim - d] + (-1,)))
    return planes.gather(-1, index).reshape(flat.shape)


def _max_pool_backward(ctx: MaxPoolNd, g: np.ndarray) -> np.ndarray:
    """Route ``g`` back through the stages in reverse, to the winning offsets."""
    if ctx.geo.unbatched:
        return _max_pool_grad(ctx, g[None], ctx.winners)[0]
    return _max_pool_grad(ctx, g, ctx.winners)


def _max_pool_grad(ctx: MaxPoolNd, g: np.ndarray, winners: Any) -> np.ndarray:
    """:func:`_max_pool_backward` of a batched ``g`` with the ``winners`` of its images."""
    geo = ctx.geo

    padded = any(lo or hi for lo, hi in geo.pads)

    def rows(g: np.ndarray, *winners: np.ndarray, out: tuple | None = None) -> tuple:
        shapes = _stage_shapes((len(g),) + ctx.in_shape[1:], geo)
        steps = list(zip(_stages(geo), shapes, winners))[::-1]
        for i, ((axis, kernel, stride, dil, _), shape, arg) in enumerate(steps):
            into = out[0] if out is not None and not padded and i == len(steps) - 1 else None
            g = scatter_winners(g, arg, shape, axis, kernel, stride, dil, into)
        if out is None:
            return (_unpad(g, geo),)
        if padded:
            out[0][...] = _unpad(g, geo)
        return out

    work = POOL_WORK * int(np.prod(g.shape[:1] + ctx.in_shape[1:]))
    (gx,) = map_rows(rows, g, *winners, work=work, into=True)
    return gx


def _flat_indices(winners: list, geo: _PoolGeometry, spatial: tuple) -> np.ndarray:
    """PyTorch's ``return_indices``: each maximum's flat index into its (unpadded) input
    plane, from the per-stage winners (in stage order: the last dim's first). Dim 0's stage
    ran last, over the maxima of the others: its winners are read first, and each earlier
    stage's at the positions the later stages chose."""
    d = len(geo.out)
    by_dim = winners[::-1]
    out_shape = by_dim[0].shape
    grid = np.indices(out_shape, sparse=True)
    pos = [None] * d  # padded coordinate of the maximum along each spatial dim
    for i in range(d):
        index = tuple(grid[:2]) + tuple(pos[:i]) + tuple(grid[2 + i :])
        offset = by_dim[i][index].astype(np.int64)
        pos[i] = grid[2 + i] * geo.stride[i] + offset * geo.dilation[i]
    flat = np.zeros(out_shape, dtype=np.int64)
    for i in range(d):
        flat = flat * spatial[i] + (pos[i] - geo.pads[i][0])
    return flat


def _max_pool(
    name: str,
    d: int,
    input: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
    return_indices: bool,
) -> Any:
    geo = _geometry(input._data, d, name, kernel_size, stride, padding, dilation, ceil_mode)
    out, *winners = MaxPoolNd.apply(input, geo)
    if not return_indices:
        return out
    idx = _flat_indices([w._data for w in winners], geo, input._data.shape[-d:])
    return out, Tensor._make(idx[0] if geo.unbatched else idx)


def max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)``.

    Args:
        kernel_size: window size.
        stride: window stride. Default: ``kernel_size``.
        padding: implicit -inf padding on both sides, at most half the kernel.
        dilation: spacing between window elements.
        ceil_mode: use ceil instead of floor for the output size.
        return_indices: also return the argmax positions (flat index along ``L``).
    """
    return _max_pool(
        "max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


@keeps_channels_last
def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """2-D max pooling over ``(N, C, H, W)`` or ``(C, H, W)``.

    Args:
        kernel_size: window size, an int or ``(kH, kW)``.
        stride: window stride. Default: ``kernel_size``.
        padding: implicit -inf padding, at most half the kernel.
        dilation: spacing between window elements.
        ceil_mode: use ceil instead of floor for the output size.
        return_indices: also return the argmax positions (flat index ``h * W + w`` into
            each input plane, as PyTorch; for ``max_unpool2d``).
    """
    if input.is_quantized:  # the integers' order is the values': pool them as they are
        if return_indices:
            raise NotImplementedError("return_indices is not yet implemented!")
        ints = Tensor._make(input._per_tensor_data("max_pool2d").astype(np.float32))
        out = max_pool2d(ints, kernel_size, stride, padding, dilation, ceil_mode)
        return input._like(out._data.astype(input._data.dtype))
    return _max_pool(
        "max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


# ---------------------------------------------------------------------- average pooling
def _divisor(
    geo: _PoolGeometry, spatial: tuple, count_include_pad: bool, divisor_override: int | None
) -> np.ndarray | int:
    """PyTorch's divisor per output position: the window clipped to the padded input
    (``count_include_pad``) or to the input itself; separable, so an outer product."""
    if divisor_override:
        return divisor_override
    div = np.ones((), dtype=np.float64)
    for size, k, s, (lo, _), o in zip(spatial, geo.kernel, geo.stride, geo.pads, geo.out):
        start = np.arange(o) * s - lo
        end = np.minimum(start + k, size + lo)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, size)
        div = np.multiply.outer(div, end - start)
    return div


class AvgPoolNd(Function):
    """Mean over each window with PyTorch's divisor (count_include_pad, divisor_override):
    window sums one spatial dim at a time, then one division."""

    _raw = True
    _grad_reads = "zero"
    _profiled_as = staticmethod(lambda input, geo, divisor: f"aten::avg_pool{len(geo.kernel)}d")

    @staticmethod
    def forward(ctx, input, geo, divisor):
        x = input._data[None] if geo.unbatched else input._data
        (a,) = map_rows(lambda rows: (_window_sums(rows, geo),), x)
        if a.dtype.kind == "i":  # int64 (see _avg_pool): C++'s integer division, toward zero
            d = np.asarray(divisor).astype(np.int64)
            a = np.where(a < 0, -(-a // d), a // d)
        else:
            a /= np.asarray(divisor, dtype=a.dtype)
        ctx.geo, ctx.divisor, ctx.in_shape = geo, divisor, x.shape
        ctx._node_name = _pool_node("AvgPool{}DBackward0", len(geo.kernel))
        return a[0] if geo.unbatched else a

    @staticmethod
    def backward(ctx, grad):
        return (
            numpy_backward(
                "avg_pool",
                lambda g: (_avg_pool_backward(ctx, g),),
                grad,
                jvp=lambda t: AvgPoolNd.apply(t, ctx.geo, ctx.divisor),  # linear: the op itself
                batched=folded(lambda g: (_avg_pool_grad(ctx, g),), ctx.geo.unbatched),
            )[0],
            None,
            None,
        )


def _avg_pool_backward(ctx: AvgPoolNd, g: np.ndarray) -> np.ndarray:
    if ctx.geo.unbatched:
        return _avg_pool_grad(ctx, g[None])[0]
    return _avg_pool_grad(ctx, g)


def _avg_pool_grad(ctx: AvgPoolNd, g: np.ndarray) -> np.ndarray:
    """:func:`_avg_pool_backward` of a batched ``g`` (any number of images)."""
    geo = ctx.geo
    g = g / np.asarray(ctx.divisor, dtype=g.dtype)

    def rows(g: np.ndarray) -> tuple:
        shapes = _stage_shapes((len(g),) + ctx.in_shape[1:], geo)
        for stage, shape in reversed(list(zip(_stages(geo), shapes))):
            g = _scatter_stage(g, shape, stage)
        return (_unpad(g, geo),)

    (gx,) = map_rows(rows, g, work=POOL_WORK * int(np.prod(g.shape[:1] + ctx.in_shape[1:])))
    return gx


def _avg_pool(
    name: str,
    d: int,
    input: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Tensor:
    kind = input._data.dtype
    if kind.kind in "biu" and kind != np.int64:  # PyTorch's CPU kernel: floats and int64 only
        op = "avg_pool2d" if name == "avg_pool1d" else name
        raise NotImplementedError(f"\"{op}\" not implemented for '{input.dtype.scalar_name}'")
    geo = _geometry(input._data, d, name, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    divisor = _divisor(geo, input._data.shape[-d:], count_include_pad, divisor_override)
    return AvgPoolNd.apply(input, geo, divisor)


def avg_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """1-D average pooling over ``(N, C, L)`` or ``(C, L)``.

    Args:
        kernel_size, stride (default ``kernel_size``), padding (zeros), ceil_mode: as
            :func:`max_pool1d`.
        count_include_pad: count the zero padding in the divisor. Default: True.
    """
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


@keeps_channels_last
def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """2-D average pooling over ``(N, C, H, W)`` or ``(C, H, W)``.

    Args:
        kernel_size, stride (default ``kernel_size``), padding (zeros), ceil_mode: as
            :func:`max_pool2d`.
        count_include_pad: count the zero padding in the divisor. Default: True.
        divisor_override: divide every window by this number instead.
    """
    if input.is_quantized:  # PyTorch's kernel: zero_point + sum(q - zero_point) / divisor, to even
        zero_point = int(input._zero_point)
        centred = Tensor._make(input._per_tensor_data("avg_pool2d").astype(np.float64) - zero_point)
        mean = avg_pool2d(
            centred, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
        )
        return input._like(qk.average_requantized(mean._data, 1, zero_point, input._data.dtype))  # exact
    return _avg_pool(
        "avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


# ---------------------------------------------------------------------- adaptive pooling
def _adaptive_ranges(size: int, out: int) -> tuple:
    """PyTorch's adaptive windows along one dim: ``[floor(i*L/o), ceil((i+1)*L/o))``."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _output_size(output_size: Any, spatial: tuple, d: int) -> tuple:
    sizes = (
        (output_size,) * d
        if isinstance(output_size, (int, np.integer)) or output_size is None
        else tuple(output_size)
    )
    if len(sizes) != d:
        raise ValueError(f"output_size must be an int or a tuple of {d} values, got {output_size}")
    return tuple(s if o is None else int(o) for o, s in zip(sizes, spatial))


def _averaging_matrix(size: int, out: int, dtype: np.dtype) -> np.ndarray:
    """``(out, size)`` matrix whose row i averages the i-th adaptive window."""
    start, end = _adaptive_ranges(size, out)
    pos = np.arange(size)
    inside = (pos >= start[:, None]) & (pos < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _apply_along(x: np.ndarray, mats: list, transpose: bool) -> np.ndarray:
    """Multiply the trailing spatial dims of ``x`` by one matrix each (separable op)."""
    d = len(mats)
    for i, m in enumerate(mats):
        axis = x.ndim - d + i
        m = m.T if transpose else m
        x = np.moveaxis(np.matmul(m, np.moveaxis(x, axis, -2)), -2, axis)
    return x


class AdaptiveAvgPoolNd(Function):
    """Adaptive average pooling as one averaging matrix per spatial dim."""

    _raw = True
    _grad_reads = "zero"
    _profiled_as = staticmethod(lambda input, out_size: f"aten::adaptive_avg_pool{len(out_size)}d")

    @staticmethod
    def forward(ctx, input, out_size):
        x = input._data
        d = len(out_size)
        mats = [_averaging_matrix(s, o, x.dtype) for s, o in zip(x.shape[-d:], out_size)]
        ctx.mats, ctx.out_size = mats, out_size
        whole = d == 2 and tuple(out_size) == (1, 1)  # PyTorch takes a mean then
        ctx._node_name = "MeanBackward1" if whole else _pool_node("AdaptiveAvgPool{}DBackward0", d)
        return map_rows(lambda rows: (np.ascontiguousarray(_apply_along(rows, mats, False)),), x)[0]

    @staticmethod
    def backward(ctx, grad):
        def grads(g):  # acts on the trailing dims only: a batch of gradients in front too
            return map_rows(lambda rows: (np.ascontiguousarray(_apply_along(rows, ctx.mats, True)),), g)

        gx = numpy_backward(
            "adaptive_avg_pool",
            grads,
            grad,
            jvp=lambda t: AdaptiveAvgPoolNd.apply(t, ctx.out_size),  # linear: the op itself
            batched=grads,
        )
        return gx[0], None


#: the CPU kernel PyTorch names when adaptive average pooling gets an integer or bool input
_ADAPTIVE_AVG_KERNEL = {1: "adaptive_avg_pool2d", 2: "adaptive_avg_pool2d", 3: "adaptive_avg_pool3d_cpu"}


def _check_adaptive(
    x: np.ndarray, d: int, name: str, output_size: Any = None, quantized: bool = False
) -> None:
    """PyTorch's checks of an adaptive pooling input (a quantized one's integers are its
    representation, which its own kernel averages)."""
    if d > 1 and isinstance(output_size, (tuple, list)) and x.ndim <= len(output_size):
        # (PyTorch's Python wrapper reads the sizes a None keeps from the input first)
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if name.startswith("adaptive_avg") and x.dtype.kind in "biu" and not quantized:
        raise NotImplementedError(
            f"\"{_ADAPTIVE_AVG_KERNEL[d]}\" not implemented for '{scalar_type_name(x.dtype)}'"
        )
    if x.ndim not in (d + 1, d + 2):
        raise _rank_error(x, d, name)
    if any(s == 0 for s in x.shape[-d:]):
        raise RuntimeError(
            f"{name}(): Expected input to have non-zero size for non-batch "
            f"dimensions, but input has sizes {list(x.shape)}"
        )


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed length ``output_size`` over ``(N, C, L)`` or ``(C, L)``."""
    _check_adaptive(input._data, 1, "adaptive_avg_pool1d")
    return AdaptiveAvgPoolNd.apply(input, _output_size(output_size, input._data.shape[-1:], 1))


@keeps_channels_last
def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed ``(H_out, W_out)`` (an int, a pair, None keeps a size) over
    ``(N, C, H, W)`` or ``(C, H, W)``."""
    if input.is_quantized:
        return _adaptive_avg_pool2d_quantized(input, output_size)
    _check_adaptive(input._data, 2, "adaptive_avg_pool2d", output_size)
    return AdaptiveAvgPoolNd.apply(input, _output_size(output_size, input._data.shape[-2:], 2))


def _adaptive_avg_pool2d_quantized(input: Tensor, output_size: Any) -> Tensor:
    """A quantized input's adaptive average pooling with its qparams, as PyTorch's kernel:
    exact integer sums of ``q - zero_point`` over each window, ``zero_point + sum / count``
    rounded half to even."""
    data = input._per_tensor_data("adaptive_avg_pool2d")
    _check_adaptive(data, 2, "adaptive_avg_pool2d", quantized=True)
    out_size = _output_size(output_size, data.shape[-2:], 2)
    sums = data.astype(np.int64) - int(input._zero_point)
    counts = np.ones((1, 1), np.int64)
    for axis, size, out in ((-2, data.shape[-2], out_size[0]), (-1, data.shape[-1], out_size[1])):
        start, end = _adaptive_ranges(size, out)
        running = np.cumsum(sums, axis=axis)
        running = np.concatenate([np.zeros_like(np.take(running, [0], axis=axis)), running], axis=axis)
        sums = np.take(running, end, axis=axis) - np.take(running, start, axis=axis)
        counts = counts * ((end - start)[:, None] if axis == -2 else (end - start)[None, :])
    return input._like(qk.average_requantized(sums, counts, int(input._zero_point), data.dtype))


def _spread(a: np.ndarray, i: int, d: int) -> np.ndarray:
    """Reshape a per-dim ``(out_i, kmax_i)`` array to broadcast over ``(*out, *kmax)``."""
    shape = [1] * (2 * d)
    shape[i], shape[d + i] = a.shape
    return a.reshape(shape)


def _adaptive_gather_index(spatial: tuple, out_size: tuple) -> tuple:
    """For adaptive max pooling: the flat input position of every element of every window,
    ``(*out, K)`` with windows padded to the largest size ``K``, and which ones are real."""
    d = len(out_size)
    flat_pos = np.zeros((), dtype=np.int64)
    valid = np.ones((), dtype=bool)
    for i, (size, o) in enumerate(zip(spatial, out_size)):
        start, end = _adaptive_ranges(size, o)
        pos = start[:, None] + np.arange(int((end - start).max()))
        flat_pos = flat_pos * size + _spread(np.minimum(pos, size - 1), i, d)
        valid = valid & _spread(pos < end[:, None], i, d)
    flat_pos, valid = np.broadcast_arrays(flat_pos, valid)
    return flat_pos.reshape(tuple(out_size) + (-1,)), valid.reshape(tuple(out_size) + (-1,))


class AdaptiveMaxPoolNd(Function):
    """Adaptive max pooling: every window is gathered (padded with -inf to the largest
    window) and reduced with one argmax; returns (values, flat input indices)."""

    _raw = True
    _grad_reads = "zero"
    _profiled_as = staticmethod(lambda input, out_size: f"aten::adaptive_max_pool{len(out_size)}d")

    @staticmethod
    def forward(ctx, input, out_size):
        x = input._data
        d = len(out_size)
        ctx._node_name = _pool_node("AdaptiveMaxPool{}DBackward0", d)
        flat_pos, valid = _adaptive_gather_index(x.shape[-d:], out_size)
        plane = int(np.prod(x.shape[-d:]))

        def rows(part: np.ndarray) -> tuple:  # the windows of a range of leading rows
            gathered = part.reshape(part.shape[:-d] + (plane,))[..., flat_pos]
            gathered = np.where(valid, gathered, np.array(-np.inf, dtype=x.dtype))
            arg = gathered.argmax(axis=-1)[..., None]
            out = np.take_along_axis(gathered, arg, axis=-1)[..., 0]
            return out, np.take_along_axis(np.broadcast_to(flat_pos, gathered.shape), arg, axis=-1)[..., 0]

        out, pos = map_rows(rows, x, work=x.size + 2 * flat_pos.size * (x.size // plane))
        ctx.pos, ctx.shape, ctx.d = pos, x.shape, d
        return out, pos

    @staticmethod
    def backward(ctx, grad, _grad_indices):
        def jvp(t: Tensor) -> Tensor:  # the tangent at each window's maximum
            lead = tuple(t.shape[: t.ndim - ctx.d])
            index = Tensor._make(ctx.pos.reshape(lead + (-1,)))
            return t.reshape(lead + (-1,)).gather(-1, index).reshape(ctx.pos.shape)

        gx = numpy_backward(
            "adaptive_max_pool",
            lambda g: map_rows(
                lambda g_rows, pos: (_scatter_to_planes(g_rows, pos, (len(g_rows),) + ctx.shape[1:], ctx.d),),
                g,
                ctx.pos,
                work=int(np.prod(ctx.shape)),
            ),
            grad,
            jvp=jvp,
        )
        return gx[0], None


def _scatter_to_planes(g: np.ndarray, pos: np.ndarray, shape: tuple, d: int) -> np.ndarray:
    """Add ``g`` into zeros of ``shape`` (``d`` trailing spatial dims) at the flat plane
    positions ``pos`` (same shape as ``g``); adaptive windows may overlap, so additions
    accumulate (``bincount``)."""
    lead = shape[: len(shape) - d]
    plane = int(np.prod(shape[len(shape) - d :]))
    rows = np.arange(int(np.prod(lead))).reshape(lead + (1,) * d)
    gx = np.bincount((rows * plane + pos).ravel(), weights=g.ravel(), minlength=rows.size * plane)
    return gx.astype(g.dtype, copy=False).reshape(shape)


def _adaptive_max_pool(name: str, d: int, input: Tensor, output_size: Any, return_indices: bool) -> Any:
    _check_adaptive(input._data, d, name, output_size)
    out, idx = AdaptiveMaxPoolNd.apply(input, _output_size(output_size, input._data.shape[-d:], d))
    return (out, idx) if return_indices else out


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a fixed length ``output_size`` over ``(N, C, L)`` or ``(C, L)``."""
    return _adaptive_max_pool("adaptive_max_pool1d", 1, input, output_size, return_indices)


@keeps_channels_last
def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a fixed ``(H_out, W_out)`` over ``(N, C, H, W)`` or ``(C, H, W)``;
    ``return_indices`` also gives flat ``h * W + w`` positions of the maxima."""
    return _adaptive_max_pool("adaptive_max_pool2d", 2, input, output_size, return_indices)


@keeps_channels_last
@autocast_op("fp32")
def max_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """3-D max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``; arguments as
    :func:`max_pool2d` (indices are flat ``(d * H + h) * W + w`` positions)."""
    return _max_pool(
        "max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


@keeps_channels_last
@autocast_op("fp32")
def avg_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """3-D average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``; arguments as
    :func:`avg_pool2d`."""
    return _avg_pool(
        "avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


@keeps_channels_last
@autocast_op("fp32")
def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed ``(D_out, H_out, W_out)`` over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    _check_adaptive(input._data, 3, "adaptive_avg_pool3d", output_size)
    return AdaptiveAvgPoolNd.apply(input, _output_size(output_size, input._data.shape[-3:], 3))


@keeps_channels_last
def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a fixed ``(D_out, H_out, W_out)`` over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    return _adaptive_max_pool("adaptive_max_pool3d", 3, input, output_size, return_indices)


def max_pool1d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple:
    """:func:`max_pool1d` returning ``(values, indices)``."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple:
    """:func:`max_pool2d` returning ``(values, indices)``."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple:
    """:func:`max_pool3d` returning ``(values, indices)``."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any, return_indices: bool = False) -> tuple:
    """:func:`adaptive_max_pool1d` returning ``(values, indices)``."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any, return_indices: bool = False) -> tuple:
    """:func:`adaptive_max_pool2d` returning ``(values, indices)``."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any, return_indices: bool = False) -> tuple:
    """:func:`adaptive_max_pool3d` returning ``(values, indices)``."""
    return adaptive_max_pool3d(input, output_size, True)
