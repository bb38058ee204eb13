"""Compiled loops of :mod:`disttorch.kernels.softmax` (numba, the ``fast`` extra): float32
softmax and log-softmax rows as PyTorch's last-dim kernels compute them, on vectors of
``lanes`` float32s (:func:`.cpu_features.float_lanes`: 16 with its AVX512 kernels, 8 with its
AVX2 ones).

A row's maximum is subtracted and SLEEF's ``expf`` taken of each difference
(:func:`.vec_exp_loops.expf`). The ``exp`` values are summed in the order of PyTorch's
vectorised ``reduce_all``: ``lanes`` at a time into one accumulator (the last, partial vector
only into its first lanes), then the lanes folded in a tree (lane ``i`` plus lane
``i ^ 8`` (16 lanes), then ``i ^ 4``, ``i ^ 2``, ``i ^ 1``); a row shorter than ``lanes`` left
to right. A
softmax is then the ``exp`` values times ``1 / sum``, a log-softmax the differences minus
SLEEF's ``logf`` of the sum (:func:`.vec_log_loops.logf`; a row holding NaN or ``+inf`` has
a NaN sum, so every element is NaN, as PyTorch's). A log-softmax's gradient is the output
gradient minus SLEEF's ``expf`` of the output times the gradient's row sum (that same order),
fused. Every float32 operation rounds on its own (``njit(contract=False)``).

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

import math

import numpy as np

from .jit import njit
from .jit_intrinsics import fma32
from .vec_exp_loops import expf
from .vec_log_loops import logf

__all__ = [
    "log_softmax",
    "log_softmax_backward",
    "log_softmax_columns",
    "log_softmax_columns_backward",
    "softmax",
]


@njit(contract=False)
def _exp_sum(x, e, acc):  # pragma: no cover - compiled
    """``e = expf(x - max(x))`` for one row; returns ``(max, sum of e)``, the sum in
    ``reduce_all``'s order (``acc``: a vector's lanes of float32 scratch)."""
    n, lanes = x.size, acc.size
    m = x[0]  # the maximum, a vector at a time (any order gives it; a NaN makes the sum NaN)
    if n >= lanes:
        for k in range(lanes):
            acc[k] = x[k]
        for d in range(lanes, n - lanes + 1, lanes):
            for k in range(lanes):
                acc[k] = x[d + k] if x[d + k] > acc[k] else acc[k]
        for k in range(lanes):
            m = acc[k] if acc[k] > m else m
    for j in range(n - n % lanes if n >= lanes else 1, n):
        m = x[j] if x[j] > m else m
    for j in range(n):
        e[j] = expf(x[j] - m)
    return m, _lane_sum(e, acc)


@njit(contract=False)
def _lane_sum(e, acc):  # pragma: no cover - compiled
    """The sum of the row ``e`` in ``reduce_all``'s order (``acc``: a vector's lanes of
    float32 scratch)."""
    n, lanes = e.size, acc.size
    if n < lanes:
        s = e[0]
        for j in range(1, n):
            s = s + e[j]
        return s
    for k in range(lanes):
        acc[k] = e[k]
    full = n - n % lanes
    for d in range(lanes, full, lanes):
        for k in range(lanes):
            acc[k] = acc[k] + e[d + k]
    for k in range(n - full):
        acc[k] = acc[k] + e[full + k]
    width = lanes // 2
    while width:
        for k in range(width):  # lane k (and k ^ width: the same sum) of the tree
            acc[k] = acc[k] + acc[k + width]
        width //= 2
    return acc[0]


@njit(contract=False)
def softmax(x, out, lanes):  # pragma: no cover - compiled
    """``out[i] = softmax(x[i])`` for each row of the 2-D float32 ``x`` (vectors of ``lanes``)."""
    acc = np.empty(lanes, np.float32)
    for i in range(x.shape[0]):
        _, s = _exp_sum(x[i], out[i], acc)
        inv = np.float32(1.0) / s
        for j in range(x.shape[1]):
            out[i, j] = out[i, j] * inv


@njit(contract=False)
def log_softmax(x, out, probs, lanes):  # pragma: no cover - compiled
    """``out[i] = log_softmax(x[i])`` for each row of the 2-D float32 ``x``, and ``probs[i]``
    its softmax as ``exp / sum`` (the probabilities backward reads; vectors of ``lanes``)."""
    acc = np.empty(lanes, np.float32)
    for i in range(x.shape[0]):
        m, s = _exp_sum(x[i], probs[i], acc)
        log_s = logf(s)
        for j in range(x.shape[1]):
            out[i, j] = (x[i, j] - m) - log_s
            probs[i, j] = probs[i, j] / s


@njit(contract=False)
def log_softmax_backward(g, y, out, lanes):  # pragma: no cover - compiled
    """``out[i] = g[i] - exp(y[i]) * sum(g[i])`` for each row of the 2-D float32 output
    gradient ``g`` and log-softmax output ``y``: the sum in ``reduce_all``'s order, SLEEF's
    ``expf``, the product fused into the subtraction (PyTorch's vectorised backward; vectors
    of ``lanes``)."""
    acc = np.empty(lanes, np.float32)
    for i in range(g.shape[0]):
        s = _lane_sum(g[i], acc)
        for j in range(g.shape[1]):
            out[i, j] = fma32(-expf(y[i, j]), s, g[i, j])


@njit(contract=False)
def log_softmax_columns(x3, out, chunk, lanes):  # pragma: no cover - compiled
    """``out = log_softmax(x3, axis=1)`` for the contiguous float32 ``(outer, dim, inner)``
    ``x3``, as PyTorch's kernel for a dim other than the last: the columns in chunks of
    ``chunk``, each column's maximum, then its sum of ``exp(x - max)`` over the dim in order
    (SLEEF's ``expf`` in a chunk's whole ``lanes``-column vectors, the C library's after
    them), SLEEF's ``logf`` of it, and ``(x - max) - log``."""
    outer, dim, inner = x3.shape
    m = np.empty(chunk, np.float32)
    s = np.empty(chunk, np.float32)
    for o in range(outer):
        for k0 in range(0, inner, chunk):
            size = min(chunk, inner - k0)
            whole = size - size % lanes
            for c in range(size):
                m[c] = -np.inf
                s[c] = 0
            for d in range(dim):
                for c in range(size):
                    v = x3[o, d, k0 + c]
                    m[c] = v if v > m[c] else m[c]  # (a NaN is never the maximum: its exp is)
            for d in range(dim):
                for c in range(whole):
                    s[c] = s[c] + expf(x3[o, d, k0 + c] - m[c])
                for c in range(whole, size):
                    s[c] = s[c] + np.float32(math.exp(x3[o, d, k0 + c] - m[c]))
            for c in range(size):
                s[c] = logf(s[c])
            for d in range(dim):
                for c in range(size):
                    out[o, d, k0 + c] = (x3[o, d, k0 + c] - m[c]) - s[c]


@njit(contract=False)
def log_softmax_columns_backward(g3, y3, out, chunk, lanes):  # pragma: no cover - compiled
    """The gradient of :func:`log_softmax_columns` from its output ``y3`` and the output
    gradient ``g3``: each column's sum of ``g`` over the dim in order, then ``g - exp(y) * sum``
    fused (SLEEF's ``expf`` in a chunk's whole ``lanes``-column vectors, the C library's after
    them)."""
    outer, dim, inner = g3.shape
    s = np.empty(chunk, np.float32)
    for o in range(outer):
        for k0 in range(0, inner, chunk):
            size = min(chunk, inner - k0)
            whole = size - size % lanes
            for c in range(size):
                s[c] = 0
            for d in range(dim):
                for c in range(size):
                    s[c] = s[c] + g3[o, d, k0 + c]
            for d in range(dim):
                for c in range(whole):
                    out[o, d, k0 + c] = fma32(-expf(y3[o, d, k0 + c]), s[c], g3[o, d, k0 + c])
                for c in range(whole, size):
                    e = np.float32(math.exp(y3[o, d, k0 + c]))
                    out[o, d, k0 + c] = fma32(-e, s[c], g3[o, d, k0 + c])
