"""Compiled loops of :mod:`disttorch.kernels.norms` (numba, the ``fast`` extra): float32
layer norm as PyTorch's CPU kernel computes it, to the bit.

Each row's mean and variance come from PyTorch's ``RowwiseMoments``: Welford's update on 8
float32 lanes over chunks of 16 vectors (its multiply-adds fused), the chunks merged by a
cascade of moment additions, the elements after the last whole vector by the scalar
update, and the 8 lanes folded in last. Then ``rstd = 1 / sqrt(var + eps)`` and
``y = fma((x - mean) * rstd, weight, bias)`` (see :func:`layer_norm_rows` without them).
The gradients follow its backward kernel: :func:`layer_norm_param_grad_rows` and
:func:`layer_norm_input_grad_rows`.

The fused multiply-adds are the processor's (:func:`.jit_intrinsics.fma32`); the loops
compile without contraction (``njit(contract=False)``), so every other step rounds on its own.

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

import math

import numpy as np

from .jit import njit
from .jit_intrinsics import fma32 as _fma

__all__ = ["layer_norm_input_grad_rows", "layer_norm_rows", "layer_norm_param_grad_rows", "row_moments"]

_LANES = 8  # float32 lanes of the vectors PyTorch's layer-norm kernel uses
_CHUNK = 16  # vectors per Welford chunk (kChunkSize)


@njit(contract=False)
def _add_moments_vec(m0_add, m1_add, m2_add, k, m0, m1, m2):  # pragma: no cover - compiled
    """Merge the lane moments ``(m0_add, m1_add, m2_add)`` into level ``k`` of the stack."""
    n = m0[k] + m0_add
    c = np.float32(0.0) if n == 0 else np.float32(np.float32(m0_add) / np.float32(n))
    m0f = np.float32(m0[k])
    for lane in range(_LANES):
        delta = np.float32(m1_add[lane] - m1[k, lane])
        m2_tmp = np.float32(m2[k, lane] + m2_add[lane])
        c_delta = np.float32(c * delta)
        m1[k, lane] = np.float32(m1[k, lane] + c_delta)
        m2[k, lane] = _fma(np.float32(delta * m0f), c_delta, m2_tmp)
    m0[k] = n


@njit(contract=False)
def _moments(x, m0, m1, m2, v1, v2):  # pragma: no cover - compiled
    """Mean and biased variance of the float32 row ``x`` (``m0``/``m1``/``m2``: the cascade's
    stack; ``v1``/``v2``: one chunk's lane moments)."""
    size = x.size
    n = size // _LANES
    chunks = (n + _CHUNK - 1) // _CHUNK
    depth = 0
    while (1 << depth) < chunks:
        depth += 1
    levels = max(depth, 1)  # the stack's levels this row uses
    m0[:levels] = 0
    m1[:levels] = 0.0
    m2[:levels] = 0.0
    for i in range(chunks):
        count = min(_CHUNK, n - i * _CHUNK)
        base = i * _CHUNK * _LANES
        v1[:] = 0.0
        v2[:] = 0.0
        for j in range(count):
            c = np.float32(np.float32(1.0) / np.float32(j + 1))
            at = base + j * _LANES
            for lane in range(_LANES):
                xv = x[at + lane]
                delta = np.float32(xv - v1[lane])
                v1[lane] = _fma(c, delta, v1[lane])
                v2[lane] = _fma(delta, np.float32(xv - v1[lane]), v2[lane])
        _add_moments_vec(count, v1, v2, 0, m0, m1, m2)
        mask = i + 1
        j = 1
        while j < depth and (mask & 1) == 0:
            _add_moments_vec(m0[j - 1], m1[j - 1], m2[j - 1], j, m0, m1, m2)
            m0[j - 1] = 0
            m1[j - 1, :] = 0.0
            m2[j - 1, :] = 0.0
            mask >>= 1
            j += 1
    for k in range(1, depth):
        _add_moments_vec(m0[k], m1[k], m2[k], 0, m0, m1, m2)
    count = 0
    mean = np.float32(0.0)
    var = np.float32(0.0)
    for i in range(n * _LANES, size):
        xv = x[i]
        delta = np.float32(xv - mean)
        count += 1
        mean = np.float32(mean + np.float32(delta / np.float32(count)))
        var = np.float32(var + np.float32(delta * np.float32(xv - mean)))
    for lane in range(_LANES):  # the lanes, each holding n elements, folded in one by one
        total = count + n
        c = np.float32(0.0) if total == 0 else np.float32(np.float32(n) / np.float32(total))
        delta = np.float32(m1[0, lane] - mean)
        mean = _fma(c, delta, mean)
        var = np.float32(
            var + _fma(np.float32(np.float32(delta * delta) * c), np.float32(count), m2[0, lane])
        )
        count = total
    return mean, np.float32(var / np.float32(size))


@njit(contract=False)
def row_moments(x, eps, mean, rstd):  # pragma: no cover - compiled
    """``mean[r]`` and ``rstd[r] = 1 / sqrt(var + eps)`` of each row of float32 ``x`` ``(R, D)``."""
    levels = 64
    m0 = np.zeros(levels, np.int64)
    m1 = np.zeros((levels, _LANES), np.float32)
    m2 = np.zeros((levels, _LANES), np.float32)
    v1 = np.zeros(_LANES, np.float32)
    v2 = np.zeros(_LANES, np.float32)
    e = np.float32(eps)
    for r in range(x.shape[0]):
        mu, var = _moments(x[r], m0, m1, m2, v1, v2)
        mean[r] = mu
        rstd[r] = np.float32(np.float32(1.0) / np.float32(math.sqrt(np.float32(var + e))))


@njit(contract=False)
def layer_norm_rows(x, mean, rstd, weight, bias, xhat, out):  # pragma: no cover - compiled
    """``xhat = (x - mean) * rstd`` per row, and ``out = fma(xhat, weight, bias)``; without a
    weight (``weight.size == 0``) ``out = fma(x - mean, rstd, bias)``, and a missing bias
    (``bias.size == 0``) adds 0: PyTorch's expression with its multiplication by 1 gone."""
    with_weight, with_bias = weight.size > 0, bias.size > 0
    for r in range(x.shape[0]):
        mu, s = mean[r], rstd[r]
        for j in range(x.shape[1]):
            centred = np.float32(x[r, j] - mu)
            h = np.float32(centred * s)
            xhat[r, j] = h
            b = bias[j] if with_bias else np.float32(0.0)
            out[r, j] = _fma(h, weight[j], b) if with_weight else _fma(centred, s, b)


@njit(contract=False)
def layer_norm_param_grad_rows(g, x, mean, rstd, acc_w, acc_b):  # pragma: no cover - compiled
    """Adds each row's ``g * x̂`` into ``acc_w`` and its ``g`` into ``acc_b`` (``(D,)``, float32;
    an empty one is skipped), row after row, as PyTorch's layer-norm backward fills a thread's
    weight- and bias-gradient buffers: ``acc_w = fma(g, fma(a, x, b), acc_w)`` with
    ``a = rstd``, ``b = -a * mean`` (its vector code's multiply-adds are fused)."""
    with_w, with_b = acc_w.size > 0, acc_b.size > 0
    for r in range(x.shape[0]):
        a = rstd[r]
        b = np.float32(-a * mean[r])
        if with_w:
            for j in range(x.shape[1]):
                acc_w[j] = _fma(g[r, j], _fma(a, x[r, j], b), acc_w[j])
        if with_b:
            for j in range(x.shape[1]):
                acc_b[j] = np.float32(acc_b[j] + g[r, j])


@njit(contract=False)
def _fold_lanes(v):  # pragma: no cover - compiled
    """The sum of 8 float32 lanes as PyTorch's vector reduction folds them: halves, then
    quarters, then pairs (``(v0 + v4) + (v2 + v6)`` plus ``(v1 + v5) + (v3 + v7)``)."""
    low = np.float32(np.float32(v[0] + v[4]) + np.float32(v[2] + v[6]))
    return np.float32(low + np.float32(np.float32(v[1] + v[5]) + np.float32(v[3] + v[7])))


@njit(contract=False)
def _lane_sums(p, full, s):  # pragma: no cover - compiled
    """``s[lane]``: the sum of ``p[lane::8]`` over the ``full`` first elements, in order
    (summed into ``p[:8]`` itself: one array, so the compiler sees no aliasing)."""
    for at in range(_LANES, full, _LANES):
        for lane in range(_LANES):
            p[lane] = np.float32(p[lane] + p[at + lane])
    for lane in range(_LANES):
        s[lane] = p[lane]


@njit(contract=False)
def _grad_sums(g, x, r, w, ps, pb, s, t):  # pragma: no cover - compiled
    """Row ``r``'s ``ds = sum(g * x * w)`` and ``db = sum(g * w)`` (``w`` empty: 1) as PyTorch's
    vector reductions sum them: 8 lanes, the first vector's products, then each whole
    vector added lane by lane (product, then sum, rounded apart), the part vector after
    them with fused multiply-adds, the lanes folded (:func:`_fold_lanes`); a row of fewer
    than 8 elements adds its products in order. ``ps``/``pb``: buffers for the row's terms,
    ``s``/``t``: for the lanes."""
    n = x.shape[1]
    with_weight = w.size > 0
    for j in range(n):
        ps[j] = np.float32(g[r, j] * x[r, j])
        pb[j] = g[r, j]
    if with_weight:
        for j in range(n):
            ps[j] = np.float32(ps[j] * w[j])
            pb[j] = np.float32(g[r, j] * w[j])
    if n < _LANES:
        ds, db = ps[0], pb[0]
        for j in range(1, n):
            ds, db = np.float32(ds + ps[j]), np.float32(db + pb[j])
        return ds, db
    full = n - n % _LANES
    _lane_sums(ps, full, s)
    _lane_sums(pb, full, t)
    for j in range(full, n):
        lane = j - full
        if with_weight:
            s[lane] = _fma(np.float32(g[r, j] * x[r, j]), w[j], s[lane])
            t[lane] = _fma(g[r, j], w[j], t[lane])
        else:
            s[lane] = _fma(g[r, j], x[r, j], s[lane])
            t[lane] = np.float32(t[lane] + g[r, j])
    return _fold_lanes(s), _fold_lanes(t)


@njit(contract=False)
def layer_norm_input_grad_rows(g, x, mean, rstd, weight, gx):  # pragma: no cover - compiled
    """``gx``, the input gradient of float32 layer norm for rows ``g``, ``x`` ``(R, D)``, as
    PyTorch's backward kernel computes it: per row ``a = rstd``, ``b = fma(db, mean, -ds) *
    a * a * a / D``, ``c = fma(-b, mean, -(db * a / D))`` and ``gx = fma(b, x, a * g * w) + c``
    (``w``: ``weight``, or 1 where ``weight`` is empty), with ``ds``/``db`` from
    :func:`_grad_sums`."""
    s = np.zeros(_LANES, np.float32)
    t = np.zeros(_LANES, np.float32)
    n = x.shape[1]
    ps = np.empty(n, np.float32)
    pb = np.empty(n, np.float32)
    scale = np.float32(np.float32(1.0) / np.float32(n))
    with_weight = weight.size > 0
    for r in range(x.shape[0]):
        ds, db = _grad_sums(g, x, r, weight, ps, pb, s, t)
        a, mu = rstd[r], mean[r]
        b = np.float32(np.float32(np.float32(np.float32(_fma(db, mu, -ds) * a) * a) * a) * scale)
        c = _fma(-b, mu, -np.float32(np.float32(db * a) * scale))
        for j in range(n):
            ag = np.float32(a * g[r, j])
            if with_weight:
                ag = np.float32(ag * weight[j])
            gx[r, j] = np.float32(_fma(b, x[r, j], ag) + c)
