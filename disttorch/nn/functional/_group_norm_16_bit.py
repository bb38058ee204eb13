"""The gradients of ``group_norm`` on bfloat16/float16 inputs with parameters of the same dtype,
as PyTorch's CPU kernel computes them: from the per-group mean and ``1/std`` it saved in the
16-bit dtype, ``dX = c1 * dY + c2 * X + c3`` with per-channel ``c1 = rstd * gamma`` and
per-group ``c2``, ``c3`` (float32), each gradient rounded once."""

from __future__ import annotations

import numpy as np

__all__ = ["group_norm_16_bit_backward"]

_F = np.float32


def group_norm_16_bit_backward(
    g: np.ndarray,
    x: np.ndarray,
    weight: np.ndarray | None,
    groups: int,
    eps: float,
    needs: tuple,
    low: np.dtype,
) -> tuple:
    """``(grad input, grad weight, grad bias)`` (None where not needed) rounded to the 16-bit
    dtype ``low`` of the input, from the gradient ``g``, the input ``x`` and ``weight`` (or
    None), each holding that dtype's values."""
    n, c = x.shape[0], x.shape[1]
    d = c // groups
    x4 = x.reshape(n, groups, d, -1).astype(_F)
    g4 = g.reshape(n, groups, d, -1).astype(_F)
    m = x4.shape[2] * x4.shape[3]
    mean32 = x4.reshape(n, groups, -1).mean(-1, dtype=_F)
    var = np.square(x4.reshape(n, groups, -1) - mean32[..., None]).mean(-1, dtype=_F)
    mean = mean32.astype(low).astype(_F)  # the statistics PyTorch saves in the 16-bit dtype
    rstd = (1.0 / np.sqrt(var.astype(np.float64) + eps)).astype(_F).astype(low).astype(_F)
    gamma = (weight.astype(_F) if weight is not None else np.ones(c, _F)).reshape(groups, d)
    ds = np.einsum("ngdm,ngdm->ngd", g4, x4, dtype=_F)  # per (sample, channel)
    db = g4.sum(-1, dtype=_F)
    gx = gw = gb = None
    if needs[0]:
        s = _F(1.0 / m)
        ds_gamma = (ds * gamma).sum(-1, dtype=_F)
        db_gamma = (db * gamma).sum(-1, dtype=_F)
        c1 = rstd[..., None] * gamma  # (n, groups, d)
        c2 = (db_gamma * mean - ds_gamma) * rstd * rstd * rstd * s
        c3 = -c2 * mean - db_gamma * rstd * s
        out = c1[..., None] * g4 + c2[..., None, None] * x4 + c3[..., None, None]
        gx = out.astype(low).reshape(g.shape)
    if needs[1]:
        gw = ((ds - db * mean[..., None]) * rstd[..., None]).sum(0, dtype=_F).reshape(c).astype(low)
    if needs[2]:
        gb = db.sum(0, dtype=_F).reshape(c).astype(low)
    return gx, gw, gb
