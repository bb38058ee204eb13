"""Convolutions: ``conv1d``, ``conv2d``, ``conv3d`` (one N-d implementation).

How it computes (im2col):

1. The input is zero-padded into ``xp`` of shape ``(N, C, *padded)``.
2. ``as_strided`` views ``xp`` as windows ``(N, C, *kernel, *out)`` without copying:
   kernel axes step by ``dilation``, output axes by ``stride``.
3. One copy makes the windows contiguous: the columns ``(N, groups, C/groups * K, P)``
   (``K`` = kernel elements, ``P`` = output positions).
4. One batched matmul with the weight ``(groups, O/groups, C/groups * K)`` gives the
   output ``(N, O, *out)``, already in NCHW order.

Backward reuses the columns: ``grad_weight = sum_n g_n @ cols_nᵀ``. The input gradient
of a stride-1 convolution is itself a stride-1 convolution: of the output gradient,
padded by ``dilation * (kernel - 1) - padding``, with the weight flipped in space and its
channel axes swapped (per group); it runs through the same im2col code. Otherwise
``grad_input = col2im(Wᵀ @ g)``, which adds the slice of each kernel offset back into a
zero-padded buffer (a loop over the K kernel offsets, never over pixels). The first path
is preferred because copying windows is faster than adding into strided slices.

Stride-1 convolutions with at least ``conv_shifted.MIN_CHANNELS`` input channels per
group (the usual 3x3 layers of a CNN) skip the columns altogether: ``kernels/conv_shifted.py``
computes them as K shifted matrix products over the flat padded input, forward, weight
gradient and (being a stride-1 convolution itself) input gradient alike. Both algorithms
live in ``kernels/`` (``conv_columns.py``, ``conv_shifted.py``) and split the batch over
the op's threads (``torch.set_num_threads``).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..._dtype import c_type_name
from ..._tensor import Tensor
from ...autograd.autocast_state import autocast_op
from ...autograd.function import Function
from ...autograd.saved_fields import saved
from ...kernels import conv_columns as _conv_columns
from ...kernels import conv_shifted as _conv_shifted
from ...kernels import cpu_features
from ._channels_last import keeps_channels_last
from ._numpy_backward import check_same_dtype, needed_grads, numpy_backward, recorded

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "conv_tbc",
]


class _Geometry(NamedTuple):
    """Everything about one convolution call except the arrays."""

    stride: tuple
    pads: tuple  # ((lo, hi), ...) per spatial dim
    dilation: tuple
    groups: int
    kernel: tuple
    out: tuple  # output spatial size
    unbatched: bool
    name: str


def _ntuple(value: Any, d: int, what: str) -> tuple:
    """An int or a length-``d`` sequence as a tuple of ``d`` ints (PyTorch's error otherwise)."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * d
    t = tuple(int(v) for v in value)
    if len(t) == 1:
        return t * d
    if len(t) != d:
        raise RuntimeError(
            f"expected {what} to be a single integer value or a list of {d} values "
            f"to match the convolution dimensions, but got {what}={list(t)}"
        )
    return t


def _pads(padding: Any, d: int, kernel: tuple, stride: tuple, dilation: tuple) -> tuple:
    """Per-dimension ``(lo, hi)`` zero padding for an int, tuple, ``'valid'`` or ``'same'``."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * d
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        pads = []
        for k, dil in zip(kernel, dilation):
            total = dil * (k - 1)
            pads.append((total // 2, total - total // 2))  # the odd extra goes to the end
        return tuple(pads)
    p = _ntuple(padding, d, "padding")
    if any(v < 0 for v in p):
        raise RuntimeError("negative padding is not supported")
    return tuple((v, v) for v in p)


def _check_ranks(name: str, d: int, x: np.ndarray, w: np.ndarray, weight_layout: str) -> tuple:
    """Check the ranks and dtypes of a ``d``-dimensional convolution's input and weight as
    PyTorch does; return the input's shape with the batch dimension an unbatched input lacks."""
    if x.ndim not in (d + 1, d + 2):
        raise RuntimeError(
            f"Expected {d + 1}D (unbatched) or {d + 2}D (batched) input to {name}, "
            f"but got input of size: {list(x.shape)}"
        )
    if w.ndim != d + 2:
        raise RuntimeError(
            f"Expected {d + 2}D weight for {name} ({weight_layout}, *kernel), "
            f"but got weight of size: {list(w.shape)}"
        )
    check_same_dtype(x, w)
    return (1,) + x.shape if x.ndim == d + 1 else x.shape


def _setup(
    name: str,
    d: int,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> _Geometry:
    """Check a convolution's arguments the way PyTorch does and work out its geometry."""
    x, w = input._data, weight._data
    if bias is not None and bias._data.dtype != x.dtype:  # (PyTorch checks the bias first)
        raise RuntimeError(
            f"Input type ({c_type_name(x.dtype)}) and bias type ({c_type_name(bias._data.dtype)}) should be the same"
        )
    xshape = _check_ranks(name, d, x, w, "out_channels, in_channels/groups")
    unbatched = x.ndim == d + 1
    stride = _ntuple(stride, d, "stride")
    dilation = _ntuple(dilation, d, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(v <= 0 for v in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    kernel = tuple(w.shape[2:])
    pads = _pads(padding, d, kernel, stride, dilation)
    out_ch, cg = w.shape[0], w.shape[1]
    if out_ch % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at "
            f"dimension 0, but got weight of size [{list(w.shape)}] instead"
        )
    if xshape[1] != cg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(w.shape)}, expected "
            f"input{list(xshape)} to have {cg * groups} channels, but got "
            f"{xshape[1]} channels instead"
        )
    if bias is not None:
        if bias._data.shape != (out_ch,):
            raise RuntimeError(
                f"Given weight of size {list(w.shape)}, expected bias to be "
                f"1-dimensional with {out_ch} elements, but got bias of size "
                f"{list(bias._data.shape)} instead"
            )
    padded = [s + lo + hi for s, (lo, hi) in zip(xshape[2:], pads)]
    span = [dil * (k - 1) + 1 for k, dil in zip(kernel, dilation)]
    if any(p < s for p, s in zip(padded, span)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))})."
            f" Kernel size: ({' x '.join(map(str, span))}). Kernel size can't be "
            f"greater than actual input size"
        )
    out = tuple((p - s) // st + 1 for p, s, st in zip(padded, span, stride))
    return _Geometry(stride, pads, dilation, groups, kernel, out, unbatched, name)


def _conv_arrays(x: np.ndarray, w: np.ndarray, geo: _Geometry, bias: np.ndarray | None = None) -> tuple:
    """``(output, saved)``: the convolution of arrays ``x`` (batched) and ``w``, plus
    ``bias`` when given, by the shifted products when they apply, else by im2col; ``saved``
    is what :func:`_weight_grad` needs (the flat input, or the columns)."""
    if all(s == 1 for s in geo.stride) and w.shape[1] >= _conv_shifted.MIN_CHANNELS:
        return _conv_shifted.conv(x, w, geo, bias)
    return _conv_columns.conv(x, w, geo, bias)


def _weight_grad(g: np.ndarray, saved: Any, w_shape: tuple, geo: _Geometry) -> np.ndarray:
    """Weight gradient from the output gradient ``g`` and what :func:`_conv_arrays` saved."""
    if isinstance(saved, tuple):
        return _conv_shifted.weight_grad(g, saved, w_shape, geo.groups)
    return _conv_columns.weight_grad(g, saved, w_shape, geo.groups)


def _input_grad_as_conv(g: np.ndarray, w: np.ndarray, geo: _Geometry, in_spatial: tuple) -> np.ndarray | None:
    """Input gradient of a stride-1 convolution as a convolution of ``g`` (None when the
    convolution is strided or pads more than its kernel spans)."""
    if any(s != 1 for s in geo.stride):
        return None
    pads = tuple(
        (dil * (k - 1) - lo, dil * (k - 1) - hi)
        for k, dil, (lo, hi) in zip(geo.kernel, geo.dilation, geo.pads)
    )
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        return None
    groups, (out_ch, cg), kdims = geo.groups, w.shape[:2], len(geo.kernel)
    # (O, Cg, *K) -> per group (Cg, Og, *K), flipped in space -> (C, Og, *K)
    wt = w.reshape((groups, out_ch // groups, cg) + geo.kernel).swapaxes(1, 2)
    wt = wt[(Ellipsis,) + (slice(None, None, -1),) * kdims]
    wt = np.ascontiguousarray(wt).reshape((groups * cg, out_ch // groups) + geo.kernel)
    geo_t = geo._replace(pads=pads, out=in_spatial, unbatched=False)
    return _conv_arrays(g, wt, geo_t)[0]


def _conv_input_grad(g: np.ndarray, w: np.ndarray, geo: _Geometry, padded_shape: tuple) -> np.ndarray:
    """Gradient of a convolution's (batched) input from its output gradient ``g``: as a
    convolution when the stride is 1, else ``col2im(Wᵀ @ g)``. This is also the forward
    of the transposed convolution."""
    in_spatial = tuple(n - lo - hi for n, (lo, hi) in zip(padded_shape[2:], geo.pads))
    gx = _input_grad_as_conv(g, w, geo, in_spatial)
    if gx is None:
        gx = _conv_columns.col2im_input_grad(g, w, geo, padded_shape)
    return gx


class ConvNd(Function):
    """N-d convolution (cross-correlation, as PyTorch) by im2col and one batched matmul."""

    _raw = True
    _grad_reads = "undefined"
    _node_name = "ConvolutionBackward0"
    _blas = True  # float16 computed in float32 (NumPy has no float16 BLAS)
    _tensor_slots = 3  # input, weight, bias
    _profiled_as = staticmethod(lambda input, weight, bias, geo: f"aten::{geo.name}")  # aten::conv2d
    _backward_saves = {
        "input": lambda ctx: ctx.inputs[0],
        "weight": saved(0),
        "stride": lambda ctx: ctx.geo.stride,
        "padding": lambda ctx: tuple(lo for lo, _ in ctx.geo.pads),
        "dilation": lambda ctx: ctx.geo.dilation,
        "groups": lambda ctx: ctx.geo.groups,
        "transposed": lambda ctx: False,
        "output_padding": lambda ctx: (0,) * len(ctx.geo.stride),
        "bias_sym_sizes_opt": lambda ctx: ctx.bias_sizes,
    }

    @staticmethod
    def forward(ctx, input, weight, bias, geo):
        x = input._data[None] if geo.unbatched else input._data
        out, saved = _conv_arrays(x, weight._data, geo, None if bias is None else bias._data)
        ctx.save_for_backward(weight)
        ctx.saved, ctx.geo = saved, geo
        ctx.bias_sizes = (0,) if bias is None else tuple(bias.shape)
        ctx.padded_shape = x.shape[:2] + tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], geo.pads))
        ctx.inputs = (input,)  # only for the double-backward guard (see numpy_backward)
        return out[0] if geo.unbatched else out

    @staticmethod
    def backward(ctx, grad):
        (weight,) = ctx._checked_saved()
        (input,) = ctx.inputs
        if recorded(grad):  # (transposed) convolutions of tensors
            need_x, need_w, need_b = ctx.needs_input_grad[:3]
            return (
                ConvTransposeNd.apply(grad, weight, None, ctx.geo, ctx.padded_shape) if need_x else None,
                ConvWeightGrad.apply(input, grad, weight.shape, ctx.geo) if need_w else None,
                _bias_grad(grad, ctx.geo) if need_b else None,
                None,
            )

        def jvp(tx: Tensor | None, tw: Tensor | None, tb: Tensor | None) -> Tensor:
            parts = [ConvNd.apply(tx, weight, None, ctx.geo)] if tx is not None else []
            if tw is not None:
                parts.append(ConvNd.apply(input, tw, None, ctx.geo))
            return _bilinear_jvp(parts, tb, grad, ctx.geo)

        gx, gw, gb = numpy_backward(
            ctx.geo.name,
            lambda g: _conv_backward(ctx, weight._data, g),
            grad,
            weight,
            *ctx.inputs,
            jvp=jvp,
            batched=lambda g: _conv_backward_batched(ctx, weight, g),
        )
        return gx, gw, gb, None


def _bias_grad(grad: Tensor, geo: _Geometry) -> Tensor:
    """The bias gradient, recorded: ``grad`` summed over all but its channel dim."""
    channel = 0 if geo.unbatched else 1
    return grad.sum([d for d in range(grad.dim()) if d != channel])


class ConvWeightGrad(Function):
    """The weight gradient of the convolution of ``input`` (its input) whose output
    gradient is ``grad``, as an op (a recorded backward): bilinear, its derivatives are the
    convolution's input gradient (a transposed convolution of ``grad``) and the convolution
    of ``input``, each by the incoming weight-shaped gradient."""

    _raw = True
    _node_name = "ConvolutionBackwardBackward0"

    @staticmethod
    def forward(ctx, input, grad, w_shape, geo):
        x, g = (input._data, grad._data) if not geo.unbatched else (input._data[None], grad._data[None])
        groups, kernel = geo.groups, tuple(w_shape[2:])
        probe = np.zeros((groups, x.shape[1] // groups) + kernel, x.dtype)  # one cheap output per group
        cols = _conv_columns.conv(x, probe, geo)[1]
        ctx.save_for_backward(input, grad)
        ctx.geo = geo
        ctx.padded_shape = x.shape[:2] + tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[2:], geo.pads))
        return _conv_columns.weight_grad(g, cols, tuple(w_shape), groups)

    @staticmethod
    def backward(ctx, tangent):
        input, grad = ctx._checked_saved()
        need_x, need_g = ctx.needs_input_grad[:2]
        return (
            ConvTransposeNd.apply(grad, tangent, None, ctx.geo, ctx.padded_shape) if need_x else None,
            ConvNd.apply(input, tangent, None, ctx.geo) if need_g else None,
            None,
            None,
        )


def _bilinear_jvp(parts: list, tb: Tensor | None, like: Tensor, geo: _Geometry) -> Tensor:
    """The sum of a (transposed) convolution's tangent terms, plus the bias tangent."""
    if tb is not None:
        parts.append(tb.reshape((-1,) + (1,) * len(geo.out)).expand(like.shape))
    out = parts[0] if parts else like.detach() * 0
    for p in parts[1:]:
        out = out + p
    return out


def _conv_backward_batched(ctx: ConvNd, weight: Tensor, g: np.ndarray) -> tuple:
    """:func:`_conv_backward` of a batch of output gradients (one more leading dim): the input
    gradient as one call on the batch folded into the images, the bias gradient as one sum,
    the weight gradient (reading the saved columns of each image) once per entry."""
    geo = ctx.geo
    need_x, need_w, need_b = needed_grads(ctx, 3)
    b, out_ch = g.shape[0], weight.shape[0]
    g = g.reshape(b, -1, out_ch, *geo.out)  # (B, N, O, *out), N = 1 for an unbatched input
    gx = gw = gb = None
    if need_b:
        gb = np.einsum("bncm->bc", g.reshape(*g.shape[:3], -1))
    if need_w:
        gw = np.stack([_weight_grad(rows, ctx.saved, weight.shape, geo) for rows in g])
    if need_x:
        images = g.reshape(-1, *g.shape[2:])
        gx = _conv_input_grad(images, weight._data, geo, images.shape[:1] + ctx.padded_shape[1:])
        gx = gx.reshape(b, *ctx.inputs[0].shape)
    return gx, gw, gb


def _conv_backward(ctx: ConvNd, w: np.ndarray, g: np.ndarray) -> tuple:
    """Gradients of input, weight and bias from the output gradient, the weight ``w`` and
    what forward saved."""
    geo = ctx.geo
    need_x, need_w, need_b = ctx.needs_input_grad[:3]
    if geo.unbatched:
        g = g[None]
    if g.dtype == np.float16 and cpu_features.has("AVX512FP16"):
        # PyTorch's CPU build hands a float16 convolution to oneDNN on such a CPU, whose native
        # float16 kernels sum in float32 and round each gradient once
        g32 = _conv_backward(ctx, w.astype(np.float32), g.astype(np.float32))
        return tuple(None if t is None else t.astype(np.float16) for t in g32)
    half = g.dtype == np.float16  # elsewhere: PyTorch's slow path's roundings
    gx = gw = gb = None
    if need_b:
        rows = g.reshape(g.shape[0], g.shape[1], math.prod(g.shape[2:]))
        if half and any(d > 1 for d in geo.dilation):  # PyTorch's slow dilated path: each
            gb = np.zeros(rows.shape[1], np.float16)  # image's sum (float32) added in float16
            for image in rows.sum(axis=2, dtype=np.float32).astype(np.float16):
                gb += image
        else:
            gb = np.einsum("ncm->c", rows, dtype=np.float32 if half else None)
    if need_w:
        gw = (
            _half_weight_grad(g, ctx.saved, w.shape, geo)
            if half
            else _weight_grad(g, ctx.saved, w.shape, geo)
        )
    if need_x:
        if half:
            gx = _conv_columns.col2im_input_grad(g, w, geo, ctx.padded_shape, np.float16)
        else:
            gx = _conv_input_grad(g, w, geo, ctx.padded_shape)
        if geo.unbatched:
            gx = gx[0]
    return gx, gw, gb


def _half_weight_grad(g: np.ndarray, saved: Any, w_shape: tuple, geo: _Geometry) -> np.ndarray:
    """A float16 weight gradient as PyTorch's slow path sums it: one image's product at a
    time, in float32, added to the float16 total and rounded."""
    total = np.zeros(w_shape, np.float16)
    for i in range(g.shape[0]):
        part = (saved[0][i : i + 1], saved[1]) if isinstance(saved, tuple) else saved[i : i + 1]
        product = _weight_grad(g[i : i + 1].astype(np.float32), part, w_shape, geo)
        total = (total.astype(np.float32) + product).astype(np.float16)
    return total


def _conv(
    name: str,
    d: int,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> Tensor:
    geo = _setup(name, d, input, weight, bias, stride, padding, dilation, groups)
    return ConvNd.apply(input, weight, bias, geo)


@autocast_op("lower")
def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    r"""1-D convolution (cross-correlation) over an input of shape ``(N, C_in, L)`` or
    ``(C_in, L)``.

    Args:
        input: input tensor ``(N, C_in, L)`` or unbatched ``(C_in, L)``.
        weight: filters ``(C_out, C_in / groups, kL)``.
        bias: optional ``(C_out,)``.
        stride: stride of the window. Default: 1.
        padding: implicit zero padding on both sides: an int, a one-element tuple,
            ``'valid'`` (none) or ``'same'`` (output as long as the input; stride 1 only).
        dilation: spacing between kernel elements. Default: 1.
        groups: number of blocked connections from input to output channels. Default: 1.
    """
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@keeps_channels_last
@autocast_op("lower")
def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    r"""2-D convolution (cross-correlation) over an input of shape ``(N, C_in, H, W)`` or
    ``(C_in, H, W)``.

    Args:
        input: input tensor ``(N, C_in, H, W)`` or unbatched ``(C_in, H, W)``.
        weight: filters ``(C_out, C_in / groups, kH, kW)``.
        bias: optional ``(C_out,)``.
        stride: stride of the window, an int or ``(sH, sW)``. Default: 1.
        padding: implicit zero padding: an int, ``(padH, padW)``, ``'valid'`` or ``'same'``
            (stride 1 only; an odd total pads one more at the end, as PyTorch).
        dilation: spacing between kernel elements, an int or ``(dH, dW)``. Default: 1.
        groups: number of blocked connections from input to output channels. Default: 1.
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@keeps_channels_last
@autocast_op("lower")
def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    r"""3-D convolution over an input of shape ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``;
    arguments as :func:`conv2d` with three spatial dims."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


# ---------------------------------------------------------------------- transposed convolution
class ConvTransposeNd(Function):
    """Transposed convolution: the input gradient of the convolution whose weight is
    ``weight`` (``(C_in, C_out / groups, *K)`` read as that convolution's
    ``(out, in / groups, *K)``); its backward is that convolution's forward."""

    _raw = True
    _node_name = "ConvolutionBackward0"
    _blas = True  # float16 computed in float32 (NumPy has no float16 BLAS)
    _profiled_as = staticmethod(lambda input, weight, bias, geo, padded_shape: f"aten::{geo.name}")

    @staticmethod
    def forward(ctx, input, weight, bias, geo, padded_shape):
        x = input._data[None] if geo.unbatched else input._data
        out = _conv_input_grad(x, weight._data, geo, (x.shape[0],) + padded_shape[1:])
        out = np.ascontiguousarray(out)
        if bias is not None:
            out += bias._data.reshape((-1,) + (1,) * len(geo.out))
        ctx.save_for_backward(input, weight)
        ctx.geo, ctx.padded_shape = geo, padded_shape
        return out[0] if geo.unbatched else out

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx._checked_saved()
        if recorded(grad):  # (transposed) convolutions of tensors
            need_x, need_w, need_b = ctx.needs_input_grad[:3]
            return (
                ConvNd.apply(grad, weight, None, ctx.geo) if need_x else None,
                ConvWeightGrad.apply(grad, input, weight.shape, ctx.geo) if need_w else None,
                _bias_grad(grad, ctx.geo) if need_b else None,
                None,
                None,
            )

        def jvp(tx: Tensor | None, tw: Tensor | None, tb: Tensor | None) -> Tensor:
            parts = (
                [ConvTransposeNd.apply(tx, weight, None, ctx.geo, ctx.padded_shape)] if tx is not None else []
            )
            if tw is not None:
                parts.append(ConvTransposeNd.apply(input, tw, None, ctx.geo, ctx.padded_shape))
            return _bilinear_jvp(parts, tb, grad, ctx.geo)

        gx, gw, gb = numpy_backward(
            ctx.geo.name + " (transposed)",
            lambda g: _conv_transpose_backward(ctx, input, weight, g),
            grad,
            input,
            weight,
            jvp=jvp,
        )
        return gx, gw, gb, None, None


def _conv_transpose_backward(ctx: ConvTransposeNd, input: Tensor, weight: Tensor, g: np.ndarray) -> tuple:
    geo = ctx.geo
    need_x, need_w, need_b = ctx.needs_input_grad[:3]
    x = input._data[None] if geo.unbatched else input._data
    if geo.unbatched:
        g = g[None]
    w = weight._data
    gx, saved = _conv_arrays(g, w, geo)
    gw = _weight_grad(x, saved, w.shape, geo) if need_w else None
    gb = None
    if need_b:
        gb = np.einsum("ncm->c", g.reshape(g.shape[0], g.shape[1], math.prod(g.shape[2:])))
    if geo.unbatched:
        gx = gx[0]
    return (gx if need_x else None), gw, gb


def _conv_transpose(
    name: str,
    d: int,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    output_padding: Any,
    groups: int,
    dilation: Any,
) -> Tensor:
    x, w = input._data, weight._data
    xshape = _check_ranks(name, d, x, w, "in_channels, out_channels/groups")
    if groups <= 0 or w.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at "
            f"dimension 0, but got weight of size [{list(w.shape)}] instead"
        )
    if xshape[1] != w.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(w.shape)}, expected "
            f"input{list(xshape)} to have {w.shape[0]} channels, but got "
            f"{xshape[1]} channels instead"
        )
    stride, pad = _ntuple(stride, d, "stride"), _ntuple(padding, d, "padding")
    dil, opad = _ntuple(dilation, d, "dilation"), _ntuple(output_padding, d, "output_padding")
    if any(v <= 0 for v in stride + dil):
        raise RuntimeError(
            "non-positive stride is not supported"
            if any(v <= 0 for v in stride)
            else "dilation should be greater than zero"
        )
    if any(v < 0 for v in pad):
        raise RuntimeError("negative padding is not supported")
    if any(o >= s and o >= dl for o, s, dl in zip(opad, stride, dil)):
        raise RuntimeError(
            f"output padding must be smaller than either stride or dilation, but "
            f"got output_padding={list(opad)}, stride={list(stride)}, "
            f"dilation={list(dil)}"
        )
    kernel = tuple(w.shape[2:])
    out_spatial = tuple(
        (n - 1) * s - 2 * p + dl * (k - 1) + o + 1
        for n, s, p, dl, k, o in zip(xshape[2:], stride, pad, dil, kernel, opad)
    )
    if any(n <= 0 for n in out_spatial):
        raise RuntimeError(
            f"Given input size per channel: {list(xshape[2:])}, the calculated "
            f"output size {list(out_spatial)} is too small"
        )
    if bias is not None and bias._data.shape != (w.shape[1] * groups,):
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(w.shape)}, expected bias to "
            f"be 1-dimensional with {w.shape[1] * groups} elements, but got bias of "
            f"size {list(bias._data.shape)} instead"
        )
    # The convolution this one transposes: from (N, C_out, *out_spatial) to the input's size.
    geo = _Geometry(
        stride, tuple((p, p) for p in pad), dil, groups, kernel, tuple(xshape[2:]), x.ndim == d + 1, name
    )
    padded_shape = (xshape[0], w.shape[1] * groups) + tuple(n + 2 * p for n, p in zip(out_spatial, pad))
    return ConvTransposeNd.apply(input, weight, bias, geo, padded_shape)


@autocast_op("lower")
def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    r"""1-D transposed convolution ("deconvolution") over ``(N, C_in, L)`` or ``(C_in, L)``.

    Args:
        weight: ``(C_in, C_out / groups, kL)``.
        stride, padding, dilation, groups: those of the convolution this one transposes.
        output_padding: extra size added to one side of the output.

    Output length: ``(L - 1) * stride - 2 * padding + dilation * (kL - 1) + output_padding + 1``.
    """
    return _conv_transpose(
        "conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups, dilation
    )


@keeps_channels_last
@autocast_op("lower")
def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    r"""2-D transposed convolution over ``(N, C_in, H, W)`` or ``(C_in, H, W)``; the adjoint
    of :func:`conv2d` with the same arguments.

    Args:
        weight: ``(C_in, C_out / groups, kH, kW)``.
        stride, padding, dilation, groups: those of the convolution this one transposes.
        output_padding: extra size added to one side of each output dim.
    """
    return _conv_transpose(
        "conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups, dilation
    )


@keeps_channels_last
@autocast_op("lower")
def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    r"""3-D transposed convolution over ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``;
    arguments as :func:`conv_transpose2d` with weight ``(C_in, C_out / groups, kD, kH, kW)``."""
    return _conv_transpose(
        "conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups, dilation
    )


@autocast_op("lower")
def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    r"""1-D convolution over time-batch-channel input ``(T, N, C_in)`` with weight
    ``(kT, C_in, C_out)`` and bias ``(C_out,)``; returns ``(T_out, N, C_out)``."""
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)
