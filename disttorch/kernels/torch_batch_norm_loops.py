"""Compiled loops of :mod:`disttorch.kernels.torch_batch_norm` (numba, the ``fast`` extra):
the same numbers as its NumPy forms, in one pass each. Every float32 operation rounds on its
own (``njit(contract=False)``); a fused multiply-add is the processor's
(:func:`.jit_intrinsics.fma32`).

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

import numpy as np

from .jit import njit
from .jit_intrinsics import fma32

__all__ = ["affine", "channel_stats", "input_grad", "plane_sums", "row_stats", "row_sums"]


@njit(contract=False)
def channel_stats(x3, mean, var_sum):  # pragma: no cover - compiled
    """Each channel of ``x3`` ``(N, C, M)``: the float64 sum of its elements, ``mean =
    float32(sum / count)``, the float64 sum of the float32 ``(x - mean)**2``. PyTorch adds
    in memory order; four float64 chains side by side (the latency of one would bound the
    loop) round otherwise only in float64's last bits, which the float32 results hide but
    for a sum within 2**-29 of a float32 tie."""
    n, c, m = x3.shape
    for k in range(c):
        t0 = t1 = t2 = t3 = 0.0
        for i in range(n):
            row = x3[i, k]
            j = 0
            while j + 4 <= m:
                t0 += row[j]
                t1 += row[j + 1]
                t2 += row[j + 2]
                t3 += row[j + 3]
                j += 4
            while j < m:
                t0 += row[j]
                j += 1
        mk = np.float32(((t0 + t1) + (t2 + t3)) / (n * m))
        s0 = s1 = s2 = s3 = 0.0
        for i in range(n):
            row = x3[i, k]
            j = 0
            while j + 4 <= m:
                d0 = row[j] - mk
                d1 = row[j + 1] - mk
                d2 = row[j + 2] - mk
                d3 = row[j + 3] - mk
                s0 += d0 * d0
                s1 += d1 * d1
                s2 += d2 * d2
                s3 += d3 * d3
                j += 4
            while j < m:
                d0 = row[j] - mk
                s0 += d0 * d0
                j += 1
        mean[k] = mk
        var_sum[k] = (s0 + s1) + (s2 + s3)


@njit(contract=False)
def row_stats(rows, chunk, mean, var_sum):  # pragma: no cover - compiled
    """The channels of ``rows`` ``(N, C)`` side by side: each ``chunk`` of rows added in order
    into float32 sums (fused squares for the variance), the chunks' sums added in float64."""
    n, c = rows.shape
    acc = np.zeros(c, np.float32)
    total = np.zeros(c, np.float64)
    for start in range(0, n, chunk):
        acc[:] = 0
        for i in range(start, min(start + chunk, n)):
            for k in range(c):
                acc[k] += rows[i, k]
        for k in range(c):
            total[k] += acc[k]
    for k in range(c):
        mean[k] = total[k] / n
    total[:] = 0
    for start in range(0, n, chunk):
        acc[:] = 0
        for i in range(start, min(start + chunk, n)):
            for k in range(c):
                d = rows[i, k] - mean[k]
                acc[k] = fma32(d, d, acc[k])
        for k in range(c):
            total[k] += acc[k]
    for k in range(c):
        var_sum[k] = total[k]


@njit(contract=False)
def affine(x3, alpha, beta, out):  # pragma: no cover - compiled
    """``out = fma(x, alpha, beta)`` per channel of ``(N, C, M)`` arrays."""
    n, c, m = x3.shape
    if m == 1:  # (rows of channels: the channels innermost)
        for i in range(n):
            for k in range(c):
                out[i, k, 0] = fma32(x3[i, k, 0], alpha[k], beta[k])
        return
    for i in range(n):
        for k in range(c):
            a, b = alpha[k], beta[k]
            for j in range(m):
                out[i, k, j] = fma32(x3[i, k, j], a, b)


@njit(contract=False)
def _lanes(acc):  # pragma: no cover - compiled
    """The 8 float32 lanes of ``acc`` added as PyTorch's vector reduction adds them."""
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]))


@njit(contract=False)
def plane_sums(x3, g3, mean, sums, dotps):  # pragma: no cover - compiled
    """Per channel of ``(N, C, M)`` arrays, the float64 sums over the planes of each plane's
    float32 ``sum(dy)`` and ``sum((x - mean) * dy)`` as 8-lane vectors reduce them (see
    :mod:`disttorch.kernels.torch_batch_norm`)."""
    n, c, m = x3.shape
    body = m - m % 8
    acc = np.empty(8, np.float32)
    dacc = np.empty(8, np.float32)
    for k in range(c):
        mk = mean[k]
        s = 0.0
        dp = 0.0
        for i in range(n):
            xr = x3[i, k]
            gr = g3[i, k]
            if m < 8:
                a = gr[0]
                d = (xr[0] - mk) * gr[0]
                for j in range(1, m):
                    a += gr[j]
                    d += (xr[j] - mk) * gr[j]
                s += a
                dp += d
                continue
            for lane in range(8):
                acc[lane] = gr[lane]
                dacc[lane] = (xr[lane] - mk) * gr[lane]
            for j in range(8, body, 8):
                for lane in range(8):
                    acc[lane] += gr[j + lane]
                    dacc[lane] += (xr[j + lane] - mk) * gr[j + lane]
            for j in range(body, m):
                acc[j - body] += gr[j]
                dacc[j - body] = fma32(xr[j] - mk, gr[j], dacc[j - body])
            s += _lanes(acc)
            dp += _lanes(dacc)
        sums[k] = s
        dotps[k] = dp


@njit(contract=False)
def row_sums(rows_x, rows_g, mean, chunk, sums, dotps):  # pragma: no cover - compiled
    """The channels of ``(R, C)`` rows side by side: each ``chunk`` of rows added in order
    into float32 ``sum(dy)`` and fused ``sum((x - mean) * dy)``, the chunks' sums in float64."""
    n, c = rows_x.shape
    acc = np.zeros(c, np.float32)
    dacc = np.zeros(c, np.float32)
    total = np.zeros(c, np.float64)
    dtotal = np.zeros(c, np.float64)
    for start in range(0, n, chunk):
        acc[:] = 0
        dacc[:] = 0
        for i in range(start, min(start + chunk, n)):
            for k in range(c):
                g = rows_g[i, k]
                acc[k] += g
                dacc[k] = fma32(rows_x[i, k] - mean[k], g, dacc[k])
        for k in range(c):
            total[k] += acc[k]
            dtotal[k] += dacc[k]
    for k in range(c):
        sums[k] = total[k]
        dotps[k] = dtotal[k]


@njit(contract=False)
def input_grad(x3, g3, mean, k, grad_mean, invstd, w, fused, out):  # pragma: no cover - compiled
    """``out = (dy - grad_mean - (x - mean) * k) * invstd * w`` per channel of ``(N, C, M)``
    arrays, the product fused into the subtraction (of rows ``(R, C, 1)``: in the channels
    before ``fused`` only)."""
    n, c, m = x3.shape
    if m == 1:  # (rows of channels: the channels innermost)
        for i in range(n):
            for ch in range(fused):
                d = x3[i, ch, 0] - mean[ch]
                inner = fma32(-d, k[ch], g3[i, ch, 0] - grad_mean[ch])
                out[i, ch, 0] = inner * invstd[ch] * w[ch]
            for ch in range(fused, c):
                d = x3[i, ch, 0] - mean[ch]
                inner = (g3[i, ch, 0] - grad_mean[ch]) - d * k[ch]
                out[i, ch, 0] = inner * invstd[ch] * w[ch]
        return
    for i in range(n):
        for ch in range(c):
            mc, kc, gm, sc, wc = mean[ch], k[ch], grad_mean[ch], invstd[ch], w[ch]
            for j in range(m):
                inner = fma32(mc - x3[i, ch, j], kc, g3[i, ch, j] - gm)
                out[i, ch, j] = inner * sc * wc
