"""Normalisation: ``batch_norm``, ``layer_norm``, ``group_norm``, ``instance_norm``.

Each is one fused Function with the closed-form backward. With ``x̂ = (x - mean) * rstd``
over the M values a statistic covers, and ``ĝ = grad * weight``,

    grad_input = rstd * (ĝ - mean(ĝ) - x̂ * mean(ĝ * x̂))

so a backward is two reductions and one elementwise pass over what forward saved (x̂).

Batch norm is split into the array kernels a synchronised (multi-process) batch norm is
built from, as in PyTorch: ``batch_norm_stats`` (local per-channel mean and variance),
``batch_norm_elemt`` (normalise and apply the affine to the centred input),
``batch_norm_backward_reduce`` (per-channel sums of the gradient) and
``batch_norm_backward_elemt`` (the input gradient from those sums). A synchronised
variant all-reduces the statistics (then centres with the global mean) and the sums
between the steps, and reuses everything else:

    mean, var, _ = batch_norm_stats(x)                  # local, per channel
    # all-reduce count, count * mean, count * (var + mean**2) -> global mean, var, count
    xc = x - mean_global (per channel); invstd = 1 / sqrt(var_global + eps)
    update_running_stats(running_mean, running_var, mean_global, var_global, count, momentum)
    out = batch_norm_elemt(xc, invstd, weight, bias)
    # backward:
    sum_g, sum_gxc = batch_norm_backward_reduce(grad, xc)   # all-reduce both
    grad_input = batch_norm_backward_elemt(grad, xc, invstd, weight, sum_g, sum_gxc, count)
    grad_weight, grad_bias = sum_gxc * invstd, sum_g        # (local sums: DDP averages them)
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from ..._dtype import bf16_numpy
from ..._tensor import Tensor
from ...autograd.function import Function
from ...autograd.grad_mode import grads_batched
from ...autograd.saved_fields import kept, saved
from ...kernels import torch_batch_norm
from ...kernels.norms import (
    layer_norm_backward_16_bit,
    layer_norm_float32,
    layer_norm_input_grad_float32,
    layer_norm_param_grads_float32,
    normalize_rows,
    normalize_rows_backward,
)
from ...kernels.reductions import column_sum
from ...kernels.threads import astype, elementwise, get_num_threads, parallel_over
from ...kernels.torch_sum import dims_sum
from ._batch_norm_16_bit import batch_norm_16_bit, batch_norm_16_bit_backward
from ._channels_last import keeps_channels_last
from ._group_norm_16_bit import group_norm_16_bit_backward
from ._numpy_backward import check_same_dtype, needed_grads, numpy_backward, recorded

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm"]


# ---------------------------------------------------------------------- shared kernels
# Layer and group norm normalise the rows of a 2-D view ``(rows, D)``. Row means and dot
# products go through BLAS (``x @ ones / D``, ``einsum('ij,ij->i')``): one read of the data
# and no temporaries, which is what makes a fused norm fast on small rows.
def _affine(xhat: np.ndarray, weight: Tensor | None, bias: Tensor | None, shape: tuple) -> np.ndarray:
    """``x̂ * weight + bias`` with the parameters reshaped to broadcast as ``shape``."""
    out = xhat * weight._data.reshape(shape) if weight is not None else xhat.copy()
    if bias is not None:
        out += bias._data.reshape(shape)
    return out


# ---------------------------------------------------------------------- batch norm kernels
# Inputs are viewed as ``(N, C, M)`` (M = spatial size, 1 for ``(N, C)``); per-channel sums
# are ``einsum`` contractions (one read, no temporaries). Forward keeps the centred input
# ``xc = x - mean``; with ``invstd`` that is all backward needs (``x̂ = xc * invstd``).
def _ncm(x: np.ndarray) -> np.ndarray:
    """``x`` ``(N, C, *)`` viewed as ``(N, C, M)``."""
    return x.reshape(x.shape[0], x.shape[1], math.prod(x.shape[2:]))  # (N may be 0)


def _per_channel(v: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A ``(C,)`` vector shaped ``(1, C, 1)`` to broadcast over an ``(N, C, M)`` view."""
    return v.astype(dtype, copy=False).reshape(1, -1, 1)


def channel_axes(x: np.ndarray) -> tuple:
    """The axes a per-channel statistic reduces over: all but dim 1."""
    return (0,) + tuple(range(2, x.ndim))


def channel_shape(x: np.ndarray) -> tuple:
    """Shape that broadcasts a ``(C,)`` vector along dim 1 of ``x``."""
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def _over_channels(x3: np.ndarray, body: Callable[[slice], Any]) -> None:
    """``body(channels)`` over ranges of the channels of an ``(N, C, M)`` view, split over
    the op's threads when large: each channel's statistic is computed whole by one thread."""
    parallel_over(x3.shape, lambda index: body(index[1]), skip=(0, 2))


def batch_norm_stats(x: np.ndarray) -> tuple:
    """Local per-channel ``(mean, biased variance, x - mean)`` of ``x`` ``(N, C, *)``; the
    statistics are ``(C,)``, the centred input has the shape of ``x``."""
    x3 = _ncm(x)
    count = x3.shape[0] * x3.shape[2]
    dt = np.einsum("ncm->c", x3[:, :0]).dtype
    mean, var, xc = np.empty(x3.shape[1], dt), np.empty(x3.shape[1], dt), np.empty_like(x3)

    def channels(c: slice) -> None:
        mean[c] = np.einsum("ncm->c", x3[:, c]) / count
        np.subtract(x3[:, c], _per_channel(mean[c], x.dtype), out=xc[:, c])
        var[c] = np.einsum("ncm,ncm->c", xc[:, c], xc[:, c]) / count

    _over_channels(x3, channels)
    return mean, var, xc.reshape(x.shape)


def _scale_shift(xc: np.ndarray, scale: np.ndarray, shift: np.ndarray) -> np.ndarray:
    out = xc * scale
    out += shift
    return out


def batch_norm_elemt(
    xc: np.ndarray, invstd: np.ndarray, weight: Tensor | None, bias: Tensor | None
) -> np.ndarray:
    """``xc * invstd * weight + bias`` per channel, from the centred input ``xc`` (element-wise:
    split over the op's threads with the same numbers)."""
    scale = _per_channel(invstd if weight is None else invstd * weight._data, xc.dtype)
    if bias is None:
        return elementwise(np.multiply, _ncm(xc), scale).reshape(xc.shape)
    return elementwise(_scale_shift, _ncm(xc), scale, _per_channel(bias._data, xc.dtype)).reshape(xc.shape)


def batch_norm_backward_reduce(g: np.ndarray, xc: np.ndarray) -> tuple:
    """Per-channel ``(sum(grad), sum(grad * xc))``: the bias gradient, and the weight
    gradient once multiplied by ``invstd``."""
    g3, xc3 = _ncm(g), _ncm(xc)
    dt = np.einsum("ncm->c", g3[:, :0]).dtype
    sum_g, sum_gxc = np.empty(g3.shape[1], dt), np.empty(g3.shape[1], dt)

    def channels(c: slice) -> None:
        sum_g[c] = np.einsum("ncm->c", g3[:, c])
        sum_gxc[c] = np.einsum("ncm,ncm->c", g3[:, c], xc3[:, c])

    _over_channels(g3, channels)
    return sum_g, sum_gxc


def _input_grad(g: np.ndarray, xc: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    gx = g * a
    gx -= xc * b
    gx -= c
    return gx


def batch_norm_backward_elemt(
    g: np.ndarray,
    xc: np.ndarray,
    invstd: np.ndarray,
    weight: Tensor | None,
    sum_g: np.ndarray,
    sum_gxc: np.ndarray,
    count: int,
) -> np.ndarray:
    """Input gradient of training-mode batch norm from the per-channel sums (over every
    process, in a synchronised variant) and the total number ``count`` of values per
    channel: ``w * invstd * (grad - sum_g / count - x̂ * sum(grad * x̂) / count)``
    (element-wise once the sums are known: split over the op's threads)."""
    a = invstd if weight is None else invstd * weight._data
    dt = g.dtype
    gx = elementwise(
        _input_grad,
        _ncm(g),
        _ncm(xc),
        _per_channel(a, dt),
        _per_channel(a * invstd * invstd * sum_gxc / count, dt),
        _per_channel(a * sum_g / count, dt),
    )
    return gx.reshape(g.shape)


def update_running_stats(
    running_mean: Tensor | None,
    running_var: Tensor | None,
    mean: np.ndarray,
    var: np.ndarray,
    count: int,
    momentum: float,
) -> None:
    """``running = (1 - momentum) * running + momentum * batch`` in place; the running
    variance uses the unbiased batch variance, as PyTorch."""
    if running_mean is not None:
        rm = running_mean._data
        rm *= 1 - momentum
        rm += momentum * mean.astype(rm.dtype, copy=False)
        running_mean._bump_version()
    if running_var is not None:
        rv = running_var._data
        rv *= 1 - momentum
        rv += (momentum * count / max(count - 1, 1)) * var.astype(rv.dtype, copy=False)
        running_var._bump_version()


def _normalized_rows_jvp(x: Tensor, t: Tensor | None, eps: float) -> tuple[Tensor, Tensor | None]:
    """``(xhat, tangent of xhat)`` for the rows of ``x`` normalised to zero mean and unit
    variance, with tensor ops (forward-mode rule of the normalisation layers): ``dxhat =
    rstd (t - mean(t) - xhat mean(t xhat))``."""
    xc = x - x.mean(-1, keepdim=True)
    rstd = ((xc * xc).mean(-1, keepdim=True) + eps).rsqrt()
    xhat = xc * rstd
    if t is None:
        return xhat, None
    return xhat, rstd * (t - t.mean(-1, keepdim=True) - xhat * (t * xhat).mean(-1, keepdim=True))


def _recorded_rows_backward(rows: Tensor, gxhat: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    """``(input gradient, xhat)`` of rows normalised to zero mean and unit variance, given
    ``gxhat`` (the output gradient times the weight), with tensor ops (a recorded backward): ``rstd (gxhat - mean(gxhat) - xhat mean(gxhat xhat))``."""
    xc = rows - rows.mean(-1, keepdim=True)
    rstd = ((xc * xc).mean(-1, keepdim=True) + eps).rsqrt()
    xhat = xc * rstd
    gx = rstd * (gxhat - gxhat.mean(-1, keepdim=True) - xhat * (gxhat * xhat).mean(-1, keepdim=True))
    return gx, xhat


def _affine_jvp(
    xhat: Tensor,
    dxhat: Tensor | None,
    weight: Tensor | None,
    tw: Tensor | None,
    tb: Tensor | None,
    shape: tuple,
) -> Tensor:
    """Tangent of ``xhat * weight + bias`` (``weight``/``bias`` broadcast as ``shape``)."""
    out = xhat.detach() * 0
    if dxhat is not None:
        out = out + (dxhat * weight.reshape(shape) if weight is not None else dxhat)
    if tw is not None:
        out = out + xhat * tw.reshape(shape)
    if tb is not None:
        out = out + tb.reshape(shape)
    return out


def _float32_kernel(x: np.ndarray, *tensors: Tensor | None) -> bool:
    """Whether PyTorch's float32 kernels apply (``kernels/torch_batch_norm.py``): a float32
    input of at least one element, contiguous or channels-last, float32 parameters and
    running statistics (or none)."""
    return (
        x.dtype == np.float32
        and x.size > 0
        and all(t is None or t._data.dtype == np.float32 for t in tensors)
        and torch_batch_norm.channel_view(x) is not None
    )


def _kernel_grads(
    ctx, x: np.ndarray, g: np.ndarray, weight: Tensor | None, mean, invstd, train: bool
) -> tuple:
    """``(grad_input, grad_weight, grad_bias)`` of a float32 input ``x`` by PyTorch's kernels:
    its vectorised one when the output gradient ``g`` is laid out as ``x`` (PyTorch's
    condition), else its strided path."""
    need_x, need_w, need_b = ctx.needs_input_grad[:3]
    w = weight._data if weight is not None else None
    g = g.astype(np.float32, copy=False)  # (as PyTorch's engine casts it to the output's dtype)
    x3, g3 = torch_batch_norm.channel_view(x), None
    if g.shape == x.shape:
        g3 = torch_batch_norm.channel_view(g)
    if g3 is not None and g3.shape == x3.shape:
        gx, gw, gb = torch_batch_norm.backward(x3, g3, mean, invstd, w, train, need_x)
        gx = torch_batch_norm.from_view(gx, x.shape) if need_x else None
    else:
        gx, gw, gb = torch_batch_norm.backward_strided(x, g, mean, invstd, w, train, need_x)
    return gx, gw if need_w else None, gb if need_b else None


def _batch_norm_float32(ctx, x, weight, bias, running_mean, running_var, momentum, eps) -> np.ndarray:
    """Training-mode batch norm of a float32 input with PyTorch's roundings: its statistics,
    running update and fused affine map (``kernels/torch_batch_norm.py``)."""
    x3 = torch_batch_norm.channel_view(x)
    mean, var_sum = torch_batch_norm.train_stats(x3)
    rm = running_mean._data if running_mean is not None else None
    rv = running_var._data if running_var is not None else None
    with np.errstate(divide="ignore", invalid="ignore"):
        invstd = torch_batch_norm.running_update(rm, rv, mean, var_sum, x.size // x.shape[1], momentum, eps)
    for t in (running_mean, running_var):
        if t is not None:
            t._bump_version()
    ctx.mean, ctx.invstd = mean, invstd
    params = [t._data if t is not None else None for t in (weight, bias)]
    return torch_batch_norm.from_view(torch_batch_norm.affine(x3, mean, invstd, *params), x.shape)


class BatchNormTrain(Function):
    """Batch norm with batch statistics (training mode); updates running stats in place."""

    _raw = True
    _own_16_bit = True  # 16-bit inputs: PyTorch's roundings (see _batch_norm_16_bit)
    _node_name, _profiled_as = "NativeBatchNormBackward0", "aten::batch_norm"
    _call_order = (0, 3, 4, 1, 2)  # F.batch_norm(input, running_mean, running_var, weight, bias)

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, momentum, eps):
        x = input._data
        low = x.dtype.itemsize == 2 and x.dtype.kind in "fV"
        ctx.eps, ctx.low = eps, low
        ctx.save_for_backward(weight, input)  # (backward reads the input: modifying it is refused)
        ctx.inputs = (input,)  # for the double-backward guard and the jvp (see numpy_backward)
        if low:
            out, ctx.mean, ctx.invstd = batch_norm_16_bit(
                x, weight, bias, running_mean, running_var, momentum, eps
            )
            return out
        ctx.kernel = kernel = _float32_kernel(x, weight, bias, running_mean, running_var)
        if kernel:
            return _batch_norm_float32(ctx, x, weight, bias, running_mean, running_var, momentum, eps)
        mean, var, xc = batch_norm_stats(x)
        invstd = 1.0 / np.sqrt(var + eps)
        update_running_stats(running_mean, running_var, mean, var, x.size // x.shape[1], momentum)
        ctx.xc, ctx.invstd = xc, invstd
        return batch_norm_elemt(xc, invstd, weight, bias)

    @staticmethod
    def backward(ctx, grad):
        weight, _ = ctx._checked_saved()
        if recorded(grad):
            (x,) = ctx.inputs
            c = x.shape[1]
            per_channel = x.transpose(0, 1)  # (C, N, *): a row per channel
            g_rows = grad.transpose(0, 1).reshape(c, -1)
            gxhat = g_rows * weight.reshape(c, 1) if weight is not None else g_rows
            gx, xhat = _recorded_rows_backward(per_channel.reshape(c, -1), gxhat, ctx.eps)
            need_x, need_w, need_b = ctx.needs_input_grad[:3]
            return (
                gx.reshape(per_channel.shape).transpose(0, 1) if need_x else None,
                (g_rows * xhat).sum(-1) if need_w else None,
                g_rows.sum(-1) if need_b else None,
            ) + (None,) * 4

        def grads(g):
            if ctx.low:
                x = ctx.inputs[0]._data
                return batch_norm_16_bit_backward(
                    g, x, weight, ctx.mean, ctx.invstd, ctx.needs_input_grad[:3]
                )
            if ctx.kernel:
                return _kernel_grads(ctx, ctx.inputs[0]._data, g, weight, ctx.mean, ctx.invstd, True)
            sum_g, sum_gxc = batch_norm_backward_reduce(g, ctx.xc)
            need_x, need_w, need_b = ctx.needs_input_grad[:3]
            gx = (
                batch_norm_backward_elemt(g, ctx.xc, ctx.invstd, weight, sum_g, sum_gxc, g.size // g.shape[1])
                if need_x
                else None
            )
            gw = (sum_gxc * ctx.invstd).astype(g.dtype, copy=False) if need_w else None
            return gx, gw, (sum_g.astype(g.dtype, copy=False) if need_b else None)

        def jvp(tx: Tensor | None, tw: Tensor | None, tb: Tensor | None) -> Tensor:
            (x,) = ctx.inputs
            c = x.shape[1]
            per_channel = x.transpose(0, 1)  # (C, N, *): a row per channel
            rows = per_channel.reshape(c, -1)
            t_rows = tx.transpose(0, 1).reshape(c, -1) if tx is not None else None
            xhat, dxhat = _normalized_rows_jvp(rows, t_rows, ctx.eps)
            back = lambda r: r.reshape(per_channel.shape).transpose(0, 1)  # noqa: E731
            shape = (1, c) + (1,) * (x.ndim - 2)
            return _affine_jvp(back(xhat), back(dxhat) if dxhat is not None else None, weight, tw, tb, shape)

        gx, gw, gb = numpy_backward("batch_norm", grads, grad, weight, *ctx.inputs, jvp=jvp)
        return gx, gw, gb, None, None, None, None


class BatchNormEval(Function):
    """Batch norm with the running statistics (evaluation mode): an affine map per channel."""

    _raw = True
    _grad_reads = "undefined"
    _blas = True  # float16 computed in float32 and rounded once, as bfloat16 (PyTorch's kernel)
    _node_name, _profiled_as = "NativeBatchNormBackward0", "aten::batch_norm"
    _call_order = (0, 3, 4, 1, 2)  # F.batch_norm(input, running_mean, running_var, weight, bias)

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps):
        x = input._data
        ctx.kernel = kernel = _float32_kernel(x, weight, bias, running_mean, running_var)
        if kernel:  # PyTorch's roundings
            invstd = np.float32(1) / np.sqrt(running_var._data + np.float32(eps))
            params = [t._data if t is not None else None for t in (weight, bias)]
            out = torch_batch_norm.affine(
                torch_batch_norm.channel_view(x), running_mean._data, invstd, *params
            )
            ctx.scale = invstd if weight is None else invstd * weight._data
            ctx.invstd, ctx.mean = invstd, running_mean._data.copy()
            ctx.backward_invstd = torch_batch_norm.eval_invstd(running_var._data, eps)
            ctx.save_for_backward(input, weight)
            return torch_batch_norm.from_view(out, x.shape)
        invstd = 1.0 / np.sqrt(running_var._data + eps)
        scale = invstd if weight is None else invstd * weight._data
        shift = -running_mean._data * scale
        if bias is not None:
            shift = shift + bias._data
        out = _ncm(x) * _per_channel(scale, x.dtype)
        out += _per_channel(shift, x.dtype)
        ctx.scale, ctx.invstd, ctx.mean = scale, invstd, running_mean._data.copy()
        ctx.save_for_backward(input, weight)
        return out.reshape(x.shape)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx._checked_saved()
        if recorded(grad):  # an affine map per channel, of the running statistics
            shape = (1, -1) + (1,) * (input.ndim - 2)
            dims = [d for d in range(input.ndim) if d != 1]
            invstd = Tensor._make(ctx.invstd.astype(input._data.dtype, copy=False).reshape(shape))
            mean = Tensor._make(ctx.mean.astype(input._data.dtype, copy=False).reshape(shape))
            need_x, need_w, need_b = ctx.needs_input_grad[:3]
            scale = invstd * weight.reshape(shape) if weight is not None else invstd
            return (
                grad * scale if need_x else None,
                (grad * ((input - mean) * invstd)).sum(dims) if need_w else None,
                grad.sum(dims) if need_b else None,
            ) + (None,) * 3

        def grads(g):
            if ctx.kernel:
                return _kernel_grads(ctx, input._data, g, weight, ctx.mean, ctx.backward_invstd, False)
            need_x, need_w, need_b = ctx.needs_input_grad[:3]
            g3 = _ncm(g)
            sum_g = np.einsum("ncm->c", g3, dtype=_accumulated(g.dtype))
            gx = (g3 * _per_channel(ctx.scale, g.dtype)).reshape(g.shape) if need_x else None
            gw = None
            if need_w:  # sum(g * x̂) with x̂ = (x - running_mean) * invstd
                gw = (np.einsum("ncm,ncm->c", g3, _ncm(input._data)) - ctx.mean * sum_g) * ctx.invstd
                gw = gw.astype(g.dtype, copy=False)
            return gx, gw, (sum_g.astype(g.dtype, copy=False) if need_b else None)

        def jvp(tx: Tensor | None, tw: Tensor | None, tb: Tensor | None) -> Tensor:
            shape = (1, -1) + (1,) * (input.ndim - 2)
            invstd = Tensor._make(ctx.invstd.astype(input._data.dtype, copy=False).reshape(shape))
            xhat = (
                input - Tensor._make(ctx.mean.astype(input._data.dtype, copy=False).reshape(shape))
            ) * invstd
            dxhat = tx * invstd if tx is not None else None
            return _affine_jvp(xhat, dxhat, weight, tw, tb, shape)

        def batched(g):  # a batch of output gradients in front
            need_x, need_w, need_b = needed_grads(ctx, 3)
            g4 = g.reshape(*g.shape[:3], -1)  # (B, N, C, M)
            sum_g = np.einsum("bncm->bc", g4, dtype=_accumulated(g.dtype))
            gx = (g4 * _per_channel(ctx.scale, g.dtype)).reshape(g.shape) if need_x else None
            gw = None
            if need_w:
                gw = (np.einsum("bncm,ncm->bc", g4, _ncm(input._data)) - ctx.mean * sum_g) * ctx.invstd
                gw = gw.astype(g.dtype, copy=False)
            return gx, gw, (sum_g.astype(g.dtype, copy=False) if need_b else None)

        gx, gw, gb = numpy_backward("batch_norm", grads, grad, weight, input, jvp=jvp, batched=batched)
        return gx, gw, gb, None, None, None


def _accumulated(dtype: np.dtype) -> np.dtype | None:
    """The dtype PyTorch's CPU normalisation kernels sum a 16-bit float's gradient in
    (float32, rounded to the dtype after); ``None`` (the dtype's own) for the others."""
    return np.float32 if dtype.itemsize == 2 and dtype.kind in "fV" else None


def _mixed_precision(input: Tensor, *params: Tensor | None) -> bool:
    """True for a float16/bfloat16 ``input`` with float32 parameters (running statistics,
    weight, bias): PyTorch's CPU normalisations accept that mix, computing in float32 and
    returning the input's dtype (parameter gradients stay float32)."""
    dt = input._data.dtype
    if dt != np.float16 and (bf16_numpy[0] is None or dt != bf16_numpy[0]):
        return False
    dts = {t._data.dtype for t in params if t is not None}
    return dts == {np.dtype(np.float32)}


def _check_param_dtypes(x: np.ndarray, *params: tuple[Tensor | None, str]) -> None:
    """PyTorch's CPU normalisation dtype checks: when the first parameter given differs from
    the input's dtype the call is "mixed" (every parameter must be float32 and the input
    float16/bfloat16, a mix :func:`_mixed_precision` takes first); otherwise each parameter
    must share the input's dtype."""
    given = [(t._data, what) for t, what in params if t is not None]
    if given and given[0][0].dtype != x.dtype:
        if any(t.dtype != np.float32 for t, _ in given):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    for t, _ in given:
        check_same_dtype(x, t)


def _check_channel_vector(t: Tensor | None, c: int, what: str) -> None:
    if t is not None and t._data.size != c:
        raise RuntimeError(f"{what} should contain {c} elements not {t._data.size}")


@keeps_channels_last
def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    r"""Batch normalisation over dim 1 of ``(N, C)`` or ``(N, C, *)``.

    In training mode, normalises with the batch's mean and (biased) variance and, when
    given, updates ``running_mean``/``running_var`` in place:
    ``running = (1 - momentum) * running + momentum * batch_stat`` (unbiased variance).
    Otherwise normalises with the running statistics.

    Args:
        input: ``(N, C, *)`` tensor.
        running_mean, running_var: ``(C,)`` tensors or None.
        weight, bias: optional ``(C,)`` affine parameters.
        training: use batch statistics. Default: False.
        momentum: running-statistics update factor. Default: 0.1.
        eps: added to the variance for stability. Default: 1e-5.
    """
    x = input._data
    if x.ndim < 2:
        raise ValueError(
            f"batch_norm expects an input of at least 2 dimensions (N, C, *), "
            f"got input of size {list(x.shape)}"
        )
    for value, what, position in ((momentum, "momentum", 7), (eps, "eps", 8)):
        if not isinstance(value, (int, float, np.number)):
            raise TypeError(
                f"batch_norm(): argument '{what}' (position {position}) must be float, not {type(value).__name__}"
            )
    if training and math.prod(x.shape[:1] + x.shape[2:]) == 1:  # first, as PyTorch's F.batch_norm
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {input.shape!r}"
        )
    if _mixed_precision(input, running_mean, running_var, weight, bias):
        out = batch_norm(input.float(), running_mean, running_var, weight, bias, training, momentum, eps)
        return out.to(input.dtype)
    c = x.shape[1]
    for t, what in (
        (running_mean, "running_mean"),
        (running_var, "running_var"),
        (weight, "weight"),
        (bias, "bias"),
    ):
        _check_channel_vector(t, c, what)
    _check_param_dtypes(
        x, (weight, "weight"), (bias, "bias"), (running_mean, "running_mean"), (running_var, "running_var")
    )
    if training:
        if x.size == 0:  # an empty batch: an empty result, the running statistics untouched
            shape = (1, c) + (1,) * (x.ndim - 2)
            out = input * weight.reshape(shape) if weight is not None else input.clone()
            return out + bias.reshape(shape) if bias is not None else out
        return BatchNormTrain.apply(input, weight, bias, running_mean, running_var, momentum, eps)
    if running_mean is None or running_var is None:
        missing = "running_mean" if running_mean is None else "running_var"
        raise RuntimeError(f"{missing} must be defined in evaluation mode")
    return BatchNormEval.apply(input, weight, bias, running_mean, running_var, eps)


# ---------------------------------------------------------------------- layer and group norm
class LayerNormFn(Function):
    """Normalise over the trailing ``ndim`` dims (as rows of a 2-D view), then the
    elementwise affine."""

    _raw = True
    _node_name, _profiled_as = "NativeLayerNormBackward0", "aten::layer_norm"
    _tensor_slots = 3  # input, weight, bias
    _backward_saves = {
        "input": lambda ctx: ctx.inputs[0],
        "weight": saved(0),
        "bias": kept("bias"),
        "normalized_shape": lambda ctx: tuple(ctx.inputs[0].shape[ctx.inputs[0].dim() - ctx.ndim :]),
        # the mean and 1/std of each normalised row, with the normalised dims kept as 1s
        "result1": lambda ctx: _row_stat(
            ctx, ctx.mean if hasattr(ctx, "mean") else ctx.inputs[0]._data.reshape(ctx.xhat.shape).mean(1)
        ),
        "result2": lambda ctx: _row_stat(ctx, ctx.rstd),
    }

    @staticmethod
    def forward(ctx, input, weight, bias, ndim, eps, low=None, mixed=False):
        x = input._data
        d = math.prod(x.shape[x.ndim - ndim :])
        rows = x.reshape(math.prod(x.shape[: x.ndim - ndim]), d)  # (no -1: d may be 0)
        rows = rows if low is None else astype(rows, np.float32)
        ctx.ndim, ctx.eps, ctx.bias, ctx.low, ctx.mixed = ndim, eps, bias, low, mixed
        ctx.inputs = (input,)  # for the double-backward guard and the jvp (see numpy_backward)
        ctx.save_for_backward(weight)
        exact = None
        if (
            low is None
            and x.dtype == np.float32
            and all(t is None or t._data.dtype == np.float32 for t in (weight, bias))
        ):
            exact = layer_norm_float32(rows, eps, *(None if t is None else t._data for t in (weight, bias)))
        if exact is not None:  # PyTorch's float32 kernel, to the bit
            out, ctx.xhat, ctx.mean, ctx.rstd = exact
            return out.reshape(x.shape)
        xhat, rstd = normalize_rows(rows, eps)
        ctx.xhat, ctx.rstd = xhat, rstd
        out = xhat * _f32(weight, low).reshape(d) if weight is not None else xhat.copy()
        if bias is not None:
            out += _f32(bias, low).reshape(d)
        out = out.reshape(x.shape)
        return out if low is None else astype(out, low)

    @staticmethod
    def backward(ctx, grad):
        (weight,) = ctx._checked_saved()
        if recorded(grad):
            (x,) = ctx.inputs
            d = ctx.xhat.shape[-1]
            g_rows = grad.reshape(-1, d)
            gxhat = g_rows * weight.reshape(d) if weight is not None else g_rows
            gx, xhat = _recorded_rows_backward(x.reshape(-1, d), gxhat, ctx.eps)
            need_x, need_w, need_b = ctx.needs_input_grad[:3]
            param_shape = tuple(x.shape[x.ndim - ctx.ndim :])
            return (
                gx.reshape(x.shape) if need_x else None,
                (g_rows * xhat).sum(0).reshape(param_shape) if need_w else None,
                g_rows.sum(0).reshape(param_shape) if need_b else None,
            ) + (None,) * 4

        def grads(g):
            need_x, need_w, need_b = ctx.needs_input_grad[:3]
            xhat = ctx.xhat
            g2 = g.reshape(xhat.shape)
            if not xhat.shape[1]:  # rows of no elements: empty gradients
                params = g.shape[g.ndim - ctx.ndim :]
                shapes = (g.shape, params, params)
                return tuple(
                    np.zeros(s, g.dtype) if n else None for n, s in zip(ctx.needs_input_grad[:3], shapes)
                )
            if ctx.low is not None:
                return _layer_norm_grads_16_bit(ctx, weight, g2, g.shape)
            gx = _layer_norm_input_grad(ctx, weight, g2, xhat).reshape(g.shape) if need_x else None
            gw, gb = _layer_norm_param_grads(ctx, g2, xhat, need_w, need_b)
            param_shape = weight._data.shape if weight is not None else g.shape[g.ndim - ctx.ndim :]
            return (
                gx,
                None if gw is None else gw.reshape(param_shape),
                None if gb is None else gb.reshape(param_shape),
            )

        def jvp(tx: Tensor | None, tw: Tensor | None, tb: Tensor | None) -> Tensor:
            (x,) = ctx.inputs
            d = ctx.xhat.shape[-1]
            xhat, dxhat = _normalized_rows_jvp(
                x.reshape(-1, d), tx.reshape(-1, d) if tx is not None else None, ctx.eps
            )
            return _affine_jvp(xhat, dxhat, weight, tw, tb, (d,)).reshape(x.shape)

        def batched(g):  # a batch of output gradients in front
            need_x, need_w, need_b = needed_grads(ctx, 3)
            if grads_batched[0] and getattr(ctx, "mean", None) is not None and g.dtype == np.float32:
                # is_grads_batched: PyTorch's float32 kernel entry by entry (its legacy vmap has
                # no rule for the op), so each entry has the bits of its own pass
                per_entry = [grads(e) for e in g]
                return tuple(
                    np.stack([p[k] for p in per_entry]) if need else None
                    for k, need in enumerate((need_x, need_w, need_b))
                )
            exact = _layer_norm_batched_float32(ctx, weight, g, need_x, need_w, need_b)
            if exact is not None:
                return exact
            xhat = ctx.xhat
            g3 = g.reshape(len(g), *xhat.shape)  # (B, R, D)
            gx = gw = gb = None
            if need_x:
                gxhat = g3 * weight._data.reshape(-1) if weight is not None else g3
                gx = normalize_rows_backward(
                    gxhat.reshape(-1, xhat.shape[1]),
                    np.tile(xhat, (len(g), 1)),
                    np.tile(ctx.rstd, (len(g), 1)),
                )
                gx = gx.reshape(g.shape)
            if need_w:
                gw = np.einsum("bij,ij->bj", g3, xhat).reshape(len(g), *weight.shape)
            if need_b:
                gb = g3.sum(1).reshape(
                    len(g), *(weight.shape if weight is not None else g.shape[g.ndim - ctx.ndim :])
                )
            return gx, gw, gb

        gx, gw, gb = numpy_backward(
            "layer_norm",
            grads,
            grad,
            weight,
            *ctx.inputs,
            jvp=jvp,
            batched=None if ctx.low is not None else batched,
        )
        return gx, gw, gb, None, None, None, None


def _layer_norm_input_grad(
    ctx: LayerNormFn, weight: Tensor | None, g2: np.ndarray, xhat: np.ndarray
) -> np.ndarray:
    """``layer_norm``'s input gradient: PyTorch's float32 kernel, to the bit, where the
    forward kept PyTorch's row statistics (a float32 input), else through ``x̂`` in NumPy's order."""
    w = weight._data.reshape(-1) if weight is not None else None
    mean = getattr(ctx, "mean", None)
    if mean is not None and g2.dtype == np.float32:
        x = ctx.inputs[0]._data.reshape(xhat.shape)
        return layer_norm_input_grad_float32(g2, x, mean, ctx.rstd, w)
    return normalize_rows_backward(g2 * w if w is not None else g2, xhat, ctx.rstd)


def _layer_norm_param_grads(
    ctx: LayerNormFn, g2: np.ndarray, xhat: np.ndarray, need_w: bool, need_b: bool
) -> tuple:
    """``layer_norm``'s weight and bias gradients (``None`` where not needed), the column sums
    of ``g * x̂`` and of ``g``: in PyTorch's order for float32 where the forward kept
    PyTorch's row statistics (a float32 input), else by ``einsum`` and :func:`column_sum`."""
    mean = getattr(ctx, "mean", None)
    if mean is not None and g2.dtype == np.float32 and (need_w or need_b):
        x = ctx.inputs[0]._data.reshape(xhat.shape)
        return layer_norm_param_grads_float32(g2, x, mean, ctx.rstd, need_w, need_b)
    return (np.einsum("ij,ij->j", g2, xhat) if need_w else None, column_sum(g2) if need_b else None)


def _layer_norm_batched_float32(
    ctx: LayerNormFn, weight: Tensor | None, g: np.ndarray, need_x: bool, need_w: bool, need_b: bool
) -> tuple | None:
    """``layer_norm``'s gradients for a batch of float32 output gradients ``g`` (the batch in
    front) as PyTorch's ``vmap`` rule computes them, to the bit where the forward kept
    PyTorch's row statistics (a float32 input; else None): the bias gradient ``g`` summed over the
    input's leading dims and the weight gradient ``g * x̂`` (``x̂ = (x - mean) * rstd``) so,
    by PyTorch's ``sum`` over those dims of the batched array; the input gradient by its
    kernel without a weight over the batch's rows, of ``g * weight``."""
    mean = getattr(ctx, "mean", None)
    if mean is None or g.dtype != np.float32:
        return None
    b, (rows, d) = len(g), ctx.xhat.shape
    x = ctx.inputs[0]._data.reshape(rows, d)
    front = tuple(range(1, g.ndim - ctx.ndim))  # the leading dims of each gradient in the batch
    params = (b,) + g.shape[g.ndim - ctx.ndim :]

    def over_front(a: np.ndarray) -> np.ndarray:
        if not front:
            return a.reshape(params)
        total = dims_sum(a, front, get_num_threads())
        return (np.add.reduce(a, axis=front) if total is None else total).reshape(params)

    gx = None
    if need_x:
        gn = g * weight._data.reshape(-1) if weight is not None else g
        gx = layer_norm_input_grad_float32(
            gn.reshape(b * rows, d),
            np.tile(x, (b, 1)),
            np.tile(mean, (b, 1)),
            np.tile(ctx.rstd, (b, 1)),
            None,
        ).reshape(g.shape)
    gw = over_front(g * ((x - mean) * ctx.rstd).reshape(g.shape[1:])) if need_w else None
    return gx, gw, over_front(g) if need_b else None


def _f32(t: Tensor, low: np.dtype | None) -> np.ndarray:
    """A parameter's array, as float32 when the op computes a 16-bit (``low``) input."""
    return t._data if low is None else astype(t._data, np.float32)


def _layer_norm_grads_16_bit(ctx: LayerNormFn, weight: Tensor | None, g2: np.ndarray, shape: tuple) -> tuple:
    """``layer_norm``'s gradients for a 16-bit input (with parameters of its dtype, or
    float32 ones), as PyTorch's CPU kernel (:func:`kernels.norms.layer_norm_backward_16_bit`)."""
    x = astype(ctx.inputs[0]._data.reshape(g2.shape), np.float32)
    w = _f32(weight, ctx.low).reshape(-1) if weight is not None else None
    mean = x.mean(1, keepdims=True)
    gx, gw, gb = layer_norm_backward_16_bit(astype(g2, np.float32), x, mean, ctx.rstd, w, ctx.low, ctx.mixed)
    need_x, need_w, need_b = ctx.needs_input_grad[:3]
    param_shape = weight._data.shape if weight is not None else shape[len(shape) - ctx.ndim :]
    return (
        gx.reshape(shape) if need_x else None,
        gw.reshape(param_shape) if need_w else None,
        gb.reshape(param_shape) if need_b else None,
    )


def _row_stat(ctx: LayerNormFn, per_row: np.ndarray) -> Tensor:
    """A per-row statistic of ``layer_norm`` in the shape PyTorch saves it in."""
    shape = ctx.inputs[0].shape
    return Tensor._make(per_row.reshape(tuple(shape[: len(shape) - ctx.ndim]) + (1,) * ctx.ndim))


def layer_norm(
    input: Tensor,
    normalized_shape: Sequence[int] | int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    r"""Layer normalisation over the last ``len(normalized_shape)`` dims:
    ``(x - mean) / sqrt(var + eps) * weight + bias`` (biased variance).

    Args:
        input: tensor whose trailing dims equal ``normalized_shape``.
        normalized_shape: an int or the trailing shape to normalise over.
        weight, bias: optional tensors of shape ``normalized_shape``.
        eps: added to the variance. Default: 1e-5.
    """
    shape = (
        (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
    )
    x = input._data
    if x.ndim < len(shape) or tuple(x.shape[x.ndim - len(shape) :]) != tuple(shape):
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size"
            f"{list(x.shape)}"
        )
    mixed = _mixed_precision(input, weight, bias)  # a 16-bit input with float32 parameters
    if not mixed:
        _check_param_dtypes(x, (weight, "weight"), (bias, "bias"))
    for t, what in ((weight, "weight"), (bias, "bias")):
        if t is not None:
            if tuple(t._data.shape) != tuple(shape):
                raise RuntimeError(
                    f"Expected {what} to be of same shape as normalized_shape, "
                    f"but got {what} of shape {list(t._data.shape)} and "
                    f"normalized_shape = {list(shape)}"
                )
    low = x.dtype if x.dtype.itemsize == 2 and x.dtype.kind in "fV" else None  # bfloat16, float16
    return LayerNormFn.apply(input, weight, bias, len(shape), eps, low, mixed)


class GroupNormFn(Function):
    """Normalise each of ``groups`` channel groups per sample (rows of an
    ``(N * groups, -1)`` view), then the per-channel affine."""

    _raw = True
    _blas = True  # float16 computed in float32 and rounded once, as bfloat16 (PyTorch's kernel)
    _node_name, _profiled_as = "NativeGroupNormBackward0", "aten::group_norm"

    @staticmethod
    def forward(ctx, input, weight, bias, groups, eps, low=None):
        x = input._data
        n = x.shape[0]
        ctx.low = low
        xhat, rstd = normalize_rows(x.reshape(n * groups, math.prod(x.shape[1:]) // groups), eps)
        xhat = xhat.reshape(x.shape)
        ctx.xhat, ctx.rstd, ctx.groups, ctx.eps = xhat, rstd, groups, eps
        ctx.inputs = (input,)  # for the double-backward guard and the jvp (see numpy_backward)
        ctx.save_for_backward(weight)
        return _affine(xhat, weight, bias, channel_shape(x))

    @staticmethod
    def backward(ctx, grad):
        (weight,) = ctx._checked_saved()
        if recorded(grad):
            (x,) = ctx.inputs
            rows, shape = x.shape[0] * ctx.groups, (1, x.shape[1]) + (1,) * (x.ndim - 2)
            gxhat = grad * weight.reshape(shape) if weight is not None else grad
            gx, xhat = _recorded_rows_backward(x.reshape(rows, -1), gxhat.reshape(rows, -1), ctx.eps)
            dims = [d for d in range(x.ndim) if d != 1]
            need_x, need_w, need_b = ctx.needs_input_grad[:3]
            return (
                gx.reshape(x.shape) if need_x else None,
                (grad * xhat.reshape(x.shape)).sum(dims) if need_w else None,
                grad.sum(dims) if need_b else None,
            ) + (None,) * 3

        def grads(g):
            if ctx.low is not None:  # 16-bit input and parameters: PyTorch's roundings
                w = weight._data if weight is not None else None
                needs = ctx.needs_input_grad[:3]
                return group_norm_16_bit_backward(
                    g, ctx.inputs[0]._data, w, ctx.groups, ctx.eps, needs, ctx.low
                )
            need_x, need_w, need_b = ctx.needs_input_grad[:3]
            rows, cols = g.shape[0] * ctx.groups, math.prod(g.shape[1:]) // ctx.groups
            gx = gw = gb = None
            if need_x:
                gxhat = g * weight._data.reshape(channel_shape(g)) if weight is not None else g
                gx = normalize_rows_backward(
                    gxhat.reshape(rows, cols), ctx.xhat.reshape(rows, cols), ctx.rstd
                ).reshape(g.shape)
            if need_w:
                gw = np.einsum("ncm,ncm->c", _ncm(g), _ncm(ctx.xhat))
            if need_b:
                gb = np.einsum("ncm->c", _ncm(g))
            return gx, gw, gb

        def jvp(tx: Tensor | None, tw: Tensor | None, tb: Tensor | None) -> Tensor:
            (x,) = ctx.inputs
            rows, cols = x.shape[0] * ctx.groups, math.prod(x.shape[1:]) // ctx.groups
            xhat, dxhat = _normalized_rows_jvp(
                x.reshape(rows, cols), tx.reshape(rows, cols) if tx is not None else None, ctx.eps
            )
            shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
            dxhat = dxhat.reshape(x.shape) if dxhat is not None else None
            return _affine_jvp(xhat.reshape(x.shape), dxhat, weight, tw, tb, shape)

        gx, gw, gb = numpy_backward("group_norm", grads, grad, weight, *ctx.inputs, jvp=jvp)
        return gx, gw, gb, None, None, None


@keeps_channels_last
def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    r"""Group normalisation: channels of ``(N, C, *)`` are split into ``num_groups`` groups,
    each normalised per sample, then a per-channel affine.

    Args:
        input: ``(N, C, *)`` tensor, ``C`` divisible by ``num_groups``.
        num_groups: number of groups.
        weight, bias: optional ``(C,)`` affine parameters.
        eps: added to the variance. Default: 1e-5.
    """
    if _mixed_precision(input, weight, bias):
        return group_norm(input.float(), num_groups, weight, bias, eps).to(input.dtype)
    x = input._data
    if x.ndim < 2 or x.shape[1] % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, "
            f"but got input of shape {list(x.shape)} and num_groups={num_groups}"
        )
    _check_param_dtypes(x, (weight, "weight"), (bias, "bias"))
    for t, what in ((weight, "weight"), (bias, "bias")):
        _check_channel_vector(t, x.shape[1], what)
    low = x.dtype if x.dtype.itemsize == 2 and x.dtype.kind in "fV" else None  # bfloat16, float16
    return GroupNormFn.apply(input, weight, bias, num_groups, eps, low)


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    r"""Instance normalisation: each channel of each sample of ``(N, C, *)`` is normalised
    on its own (group norm with one channel per group). With ``use_input_stats`` and
    running statistics given, those are updated with the per-instance statistics averaged
    over the batch; with ``use_input_stats=False`` the running statistics are used.
    """
    if _mixed_precision(input, running_mean, running_var, weight, bias):
        out = instance_norm(
            input.float(), running_mean, running_var, weight, bias, use_input_stats, momentum, eps
        )
        return out.to(input.dtype)
    x = input._data
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    if running_mean is not None or running_var is not None:
        axes = tuple(range(2, x.ndim))
        count = int(np.prod(x.shape[2:]))
        update_running_stats(
            running_mean,
            running_var,
            x.mean(axis=axes).mean(axis=0),
            x.var(axis=axes).mean(axis=0),
            count,
            momentum,
        )
    n, c = x.shape[:2]  # PyTorch's way: one batch of N*C channels (so its nodes too)
    w, b = (None if t is None else t.repeat(n) for t in (weight, bias))
    out = batch_norm(input.reshape(1, n * c, *x.shape[2:]), None, None, w, b, True, momentum, eps)
    return out.view(x.shape)
