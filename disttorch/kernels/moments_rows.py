"""Float32 layer norm as PyTorch's CPU kernel computes it, in NumPy: the steps of
:mod:`.moments_loops` (numba's form, which takes one row at a time) taken by every row at
once, for a Python without numba.

A row's length alone fixes the steps (how many 8-lane vectors, 16-vector Welford chunks and
cascade merges; the elements after the last vector), so all rows go through them together:
each step is an array operation on the ``(R, 8)`` lane moments of the ``R`` rows. The fused
multiply-adds are :func:`.fma.fma`'s (in float64, exact but for double-rounding ties, about
one in 2**29); every other step rounds in float32.
"""

from __future__ import annotations

import numpy as np

from .fma import fma

__all__ = ["layer_norm_rows", "row_moments"]

_LANES = 8  # float32 lanes of the vectors PyTorch's layer-norm kernel uses
_CHUNK = 16  # vectors per Welford chunk (kChunkSize)
_F32 = np.float32


def _add_moments(
    count: int, v1: np.ndarray, v2: np.ndarray, level: int, m0: list, m1: list, m2: list
) -> None:
    """Merge lane moments ``(count, v1, v2)`` (each ``(R, 8)``) into ``level`` of the cascade."""
    n = m0[level] + count
    c = _F32(0.0) if n == 0 else _F32(_F32(count) / _F32(n))
    delta = v1 - m1[level]
    m2_tmp = m2[level] + v2
    c_delta = c * delta
    m1[level] = m1[level] + c_delta
    m2[level] = fma(delta * _F32(m0[level]), c_delta, m2_tmp)
    m0[level] = n


def row_moments(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """``(mean, rstd)`` of each row of float32 ``x`` ``(R, D)``, each ``(R,)``: PyTorch's
    ``RowwiseMoments`` (Welford on 8 lanes over chunks of 16 vectors, the chunks merged by a
    cascade, the tail by the scalar update, the lanes folded last), ``rstd = 1 / sqrt(var + eps)``."""
    rows, size = x.shape
    n = size // _LANES
    chunks = -(-n // _CHUNK)
    depth = max(chunks - 1, 0).bit_length()
    zeros = np.zeros((rows, _LANES), _F32)
    levels = max(depth, 1)
    m0, m1, m2 = [0] * levels, [zeros] * levels, [zeros] * levels
    lanes = np.ascontiguousarray(x[:, : n * _LANES].reshape(rows, n, _LANES).transpose(1, 0, 2))  # (n, R, 8)
    for i in range(chunks):
        count = min(_CHUNK, n - i * _CHUNK)
        v1 = v2 = zeros
        for j in range(count):
            c = _F32(_F32(1.0) / _F32(j + 1))
            xv = lanes[i * _CHUNK + j]
            delta = xv - v1
            v1 = fma(c, delta, v1)
            v2 = fma(delta, xv - v1, v2)
        _add_moments(count, v1, v2, 0, m0, m1, m2)
        mask, j = i + 1, 1
        while j < depth and (mask & 1) == 0:
            _add_moments(m0[j - 1], m1[j - 1], m2[j - 1], j, m0, m1, m2)
            m0[j - 1], m1[j - 1], m2[j - 1] = 0, zeros, zeros
            mask >>= 1
            j += 1
    for k in range(1, depth):
        _add_moments(m0[k], m1[k], m2[k], 0, m0, m1, m2)
    count = 0
    mean, var = np.zeros(rows, _F32), np.zeros(rows, _F32)
    for i in range(n * _LANES, size):  # the elements after the last whole vector
        xv = x[:, i]
        delta = xv - mean
        count += 1
        mean = mean + delta / _F32(count)
        var = var + delta * (xv - mean)
    for lane in range(_LANES):  # the lanes, each holding n elements, folded in one by one
        total = count + n
        c = _F32(0.0) if total == 0 else _F32(_F32(n) / _F32(total))
        delta = m1[0][:, lane] - mean
        mean = fma(c, delta, mean)
        var = var + fma((delta * delta) * c, _F32(count), m2[0][:, lane])
        count = total
    var = var / _F32(size)
    return mean, _F32(1.0) / np.sqrt(var + _F32(eps))


def layer_norm_rows(
    x: np.ndarray, mean: np.ndarray, rstd: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """``(out, xhat)``: ``xhat = (x - mean) * rstd`` per row and ``out = fma(xhat, weight, bias)``;
    without a weight ``fma(x - mean, rstd, bias)``, a missing bias adding 0 (``mean``/``rstd``
    ``(R, 1)``), as :func:`.moments_loops.layer_norm_rows`."""
    centred = x - mean
    xhat = centred * rstd
    b = np.zeros((), _F32) if bias is None else bias
    out = fma(xhat, weight, b) if weight is not None else fma(centred, rstd, b)
    return out.astype(_F32, copy=False), xhat
