"""Training-mode batch norm of bfloat16/float16 inputs with parameters of the same dtype, as
PyTorch's CPU kernels compute it: sums in float32, the batch mean, variance sum and
``1/std`` stored in the 16-bit dtype (its "save_mean"/"save_invstd"), the output
``x * alpha + beta`` from float32 ``alpha``/``beta`` rounded once; the running statistics
updated with the dtype's arithmetic (``momentum`` rounded to it); the backward from the
rounded statistics, its sums in float32 and each gradient rounded once."""

from __future__ import annotations

import numpy as np

from ..._tensor import Tensor

__all__ = ["batch_norm_16_bit", "batch_norm_16_bit_backward"]

_F = np.float32


def _ncm(x: np.ndarray) -> np.ndarray:
    """``x`` ``(N, C, *)`` as float32 ``(N, C, M)``."""
    return x.reshape(x.shape[0], x.shape[1], -1).astype(_F)


def _rounded(a: np.ndarray | np.floating, low: np.dtype) -> np.ndarray:
    return np.asarray(a, dtype=_F).astype(low).astype(_F)


def batch_norm_16_bit(
    x: np.ndarray,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    momentum: float,
    eps: float,
) -> tuple:
    """``(output in x's dtype, mean, invstd)`` (the statistics rounded to that dtype, held in
    float32); updates the running statistics in place."""
    low = x.dtype
    x3 = _ncm(x)
    n = x3.shape[0] * x3.shape[2]
    mean32 = (np.einsum("ncm->c", x3, dtype=_F) / _F(n)).astype(_F)
    mean = _rounded(mean32, low)
    # an (N, C) input takes the channels-last kernel, which centres on the rounded mean
    centred = x3 - (mean if x3.shape[2] == 1 else mean32)[None, :, None]
    var_sum32 = np.einsum("ncm,ncm->c", centred, centred, dtype=_F)
    var_sum = _rounded(var_sum32, low)
    if low == np.float16:  # PyTorch's float16 kernel keeps the variance in float32
        var = (var_sum32 / _F(n)).astype(np.float64)
        _update_running_float32(running_mean, running_var, mean32, var_sum32, n, momentum)
    else:  # bfloat16: the variance sum over the count, both rounded, rounded again
        var = _rounded(var_sum / _rounded(n, low), low).astype(np.float64)
        _update_running(running_mean, running_var, mean, var_sum, n, momentum, low)
    invstd = _rounded((1.0 / np.sqrt(var + eps)).astype(_F), low)
    alpha = invstd * (weight._data.astype(_F) if weight is not None else _F(1))
    beta = (bias._data.astype(_F) if bias is not None else _F(0)) - mean * alpha
    out = x3 * alpha[None, :, None] + beta[None, :, None]
    return out.astype(low).reshape(x.shape), mean, invstd


def _update_running(
    running_mean: Tensor | None,
    running_var: Tensor | None,
    mean: np.ndarray,
    var_sum: np.ndarray,
    n: int,
    momentum: float,
    low: np.dtype,
) -> None:
    """``momentum * batch + (1 - momentum) * running`` with ``momentum`` and ``1 - momentum``
    in the 16-bit dtype: the mean's products and sum each rounded to it; the variance's
    ``momentum * unbiased variance`` in float32 and only the sum rounded."""
    mo = _rounded(momentum, low)
    keep = _rounded(_F(1) - mo, low)
    if running_mean is not None:
        rm = running_mean._data.astype(_F)
        running_mean._data[...] = (_rounded(mo * mean, low) + _rounded(keep * rm, low)).astype(low)
        running_mean._bump_version()
    if running_var is not None:
        rv = running_var._data.astype(_F)
        unbiased = _rounded(var_sum / _rounded(max(n - 1, 1), low), low)
        running_var._data[...] = (mo * unbiased + _rounded(keep * rv, low)).astype(low)
        running_var._bump_version()


def _update_running_float32(
    running_mean: Tensor | None,
    running_var: Tensor | None,
    mean: np.ndarray,
    var_sum: np.ndarray,
    n: int,
    momentum: float,
) -> None:
    """``momentum * batch + (1 - momentum) * running`` in float32 from the unrounded float32
    batch mean and unbiased variance, rounded once (float16's update)."""
    mo, keep = _F(momentum), _F(1.0 - momentum)
    for running, batch in ((running_mean, mean), (running_var, var_sum / _F(max(n - 1, 1)))):
        if running is not None:
            running._data[...] = (mo * batch + keep * running._data.astype(_F)).astype(running._data.dtype)
            running._bump_version()


def batch_norm_16_bit_backward(
    g: np.ndarray, x: np.ndarray, weight: Tensor | None, mean: np.ndarray, invstd: np.ndarray, needs: tuple
) -> tuple:
    """``(grad input, grad weight, grad bias)`` (None where not needed) in the 16-bit dtype of
    ``g``, from the rounded statistics of :func:`batch_norm_16_bit`."""
    low = g.dtype
    g3, x3 = _ncm(g), _ncm(x)
    n = g3.shape[0] * g3.shape[2]
    centred = x3 - mean[None, :, None]
    total = np.einsum("ncm->c", g3, dtype=_F)
    dotp = np.einsum("ncm,ncm->c", centred, g3, dtype=_F)
    w = weight._data.astype(_F) if weight is not None else _F(1)
    gx = None
    if needs[0]:
        k = (dotp * invstd * invstd / _F(n))[None, :, None]
        grad_mean = (total / _F(n))[None, :, None]
        gx = (g3 - grad_mean - centred * k) * invstd[None, :, None]
        if weight is not None:
            gx *= w[None, :, None]
        gx = gx.astype(low).reshape(g.shape)
    gw = (dotp * invstd).astype(low) if needs[1] else None
    gb = total.astype(low) if needs[2] else None
    return gx, gw, gb
