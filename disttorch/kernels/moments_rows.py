"""Float32 layer norm and its gradients as PyTorch's CPU kernel computes them, in NumPy: the
steps of :mod:`.moments_loops` (numba's form, which takes one row at a time) taken by every
row at once, for a Python without numba (the weight and bias gradients, which add the rows
one after another, take them one at a time, each step on a whole row).

A row's length alone fixes the steps (how many 8-lane vectors, 16-vector Welford chunks and
cascade merges; the elements after the last vector), so all rows go through them together:
each step is an array operation on the ``(R, 8)`` lane moments of the ``R`` rows. The fused
multiply-adds are :func:`.fma.fma`'s (in float64, exact but for double-rounding ties, about
one in 2**29); every other step rounds in float32.
"""

from __future__ import annotations

import numpy as np

from .fma import fma

__all__ = ["layer_norm_input_grad_rows", "layer_norm_param_grad_rows", "layer_norm_rows", "row_moments"]

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


def layer_norm_param_grad_rows(
    g: np.ndarray, x: np.ndarray, mean: np.ndarray, rstd: np.ndarray, acc_w: np.ndarray, acc_b: np.ndarray
) -> None:
    """Adds each row's ``g * x̂`` into ``acc_w`` and its ``g`` into ``acc_b`` (``(D,)``; an
    empty one is skipped), row after row, as
    :func:`.moments_loops.layer_norm_param_grad_rows`: ``acc_w = fma(g, fma(a, x, b), acc_w)``
    with ``a = rstd``, ``b = -a * mean``."""
    if acc_w.size:
        a = rstd.reshape(-1, 1)
        xhat = fma(a, x, -a * mean.reshape(-1, 1))
        for r in range(len(x)):
            acc_w[:] = fma(g[r], xhat[r], acc_w)
    if acc_b.size:
        for r in range(len(x)):
            acc_b += g[r]


def _fold_lanes(v: np.ndarray) -> np.ndarray:
    """The sums of the rows of 8 lanes ``(R, 8)`` as PyTorch's vector reduction folds them."""
    low = (v[:, 0] + v[:, 4]) + (v[:, 2] + v[:, 6])
    return low + ((v[:, 1] + v[:, 5]) + (v[:, 3] + v[:, 7]))


def _grad_sums(g: np.ndarray, x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``ds = sum(g * x * w)`` and ``db = sum(g * w)`` (``w`` empty: 1) as
    :func:`.moments_loops._grad_sums` sums them: 8 lanes over the whole vectors, the part
    vector fused, the lanes folded; a row shorter than a vector in order."""
    with_weight = w.size > 0
    ps = g * x
    ps, pb = (ps * w, g * w) if with_weight else (ps, g)
    n = x.shape[1]
    if n < _LANES:
        ds, db = ps[:, 0], pb[:, 0]
        for j in range(1, n):
            ds, db = ds + ps[:, j], db + pb[:, j]
        return ds, db
    full = n - n % _LANES
    s, t = ps[:, :_LANES].copy(), pb[:, :_LANES].copy()
    for at in range(_LANES, full, _LANES):
        s += ps[:, at : at + _LANES]
        t += pb[:, at : at + _LANES]
    for j in range(full, n):
        lane = j - full
        if with_weight:
            s[:, lane] = fma(g[:, j] * x[:, j], w[j], s[:, lane])
            t[:, lane] = fma(g[:, j], w[j], t[:, lane])
        else:
            s[:, lane] = fma(g[:, j], x[:, j], s[:, lane])
            t[:, lane] += g[:, j]
    return _fold_lanes(s), _fold_lanes(t)


def layer_norm_input_grad_rows(
    g: np.ndarray, x: np.ndarray, mean: np.ndarray, rstd: np.ndarray, weight: np.ndarray, gx: np.ndarray
) -> None:
    """``gx``, the input gradient of float32 layer norm for rows ``g``, ``x`` ``(R, D)`` (``mean``,
    ``rstd`` ``(R,)``; ``weight`` empty for none), as
    :func:`.moments_loops.layer_norm_input_grad_rows` computes it."""
    ds, db = _grad_sums(g, x, weight)
    scale = _F32(_F32(1.0) / _F32(x.shape[1]))
    b = (((fma(db, mean, -ds) * rstd) * rstd) * rstd) * scale
    c = fma(-b, mean, -((db * rstd) * scale))
    ag = rstd[:, None] * g
    if weight.size:
        ag = ag * weight
    gx[:] = fma(b[:, None], x, ag) + c[:, None]
