"""Compiled loop of :mod:`disttorch.kernels.norms`' PyTorch row statistics (numba, the
``fast`` extra): ``RowwiseMoments`` (``moments_utils.h``), the float32 Welford pass of
PyTorch's CPU layer norm, step by step. Every float32 operation rounds on its own
(``njit(contract=False)``), and where PyTorch's compiler fuses a multiply and an add the loop
uses the processor's fused multiply-add (:func:`.jit_intrinsics.fma32`).

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

import numpy as np

from .jit import njit
from .jit_intrinsics import fma32

__all__ = ["row_moments"]

_LANES = 8  # float32 lanes of PyTorch's (AVX2) vectors
_CHUNK = 16  # vectors a Welford chunk takes


@njit(contract=False)
def _add_moments(m0_add, m1_add, m2_add, m0, m1, m2):  # pragma: no cover - compiled
    """PyTorch's ``AddMoments``: the moments ``(m0_add, m1_add, m2_add)`` merged into
    ``(m0, m1, m2)``; returns the merged ``(count, mean, m2)``."""
    n = m0 + m0_add
    c = np.float32(0) if n == 0 else np.float32(m0_add) / np.float32(n)
    delta = m1_add - m1
    return n, fma32(c, delta, m1), m2 + fma32(delta * delta * c, np.float32(m0), m2_add)


@njit(contract=False)
def _step(v, inverse, m1, m2):  # pragma: no cover - compiled
    """One Welford step of a lane: ``delta = v - m1; m1 += delta / j; m2 += delta * (v - m1)``,
    ``1 / j`` given, both updates fused as PyTorch's compiled vector loop."""
    delta = v - m1
    m1 = fma32(delta, inverse, m1)
    return m1, fma32(delta, v - m1, m2)


@njit(contract=False)
def row_moments(x, eps, mean, rstd):  # pragma: no cover - compiled
    """Each row of the float32 ``x`` ``(R, N)``: its mean and ``1 / sqrt(max(var, 0) + eps)``
    (biased variance) as PyTorch's ``RowwiseMoments`` and layer norm compute them: Welford in
    8 lanes over chunks of 16 vectors, the chunks merged in a binary cascade, the elements
    after the last whole vector one by one, then the lanes merged in order."""
    rows, size = x.shape
    n = size // _LANES
    m = (n + _CHUNK - 1) // _CHUNK
    depth = 1
    while (1 << depth) < m:
        depth += 1
    inverse = np.empty(_CHUNK, np.float32)
    for j in range(_CHUNK):
        inverse[j] = np.float32(1) / np.float32(j + 1)
    counts = np.zeros(depth, np.int64)
    m1s = np.zeros((depth, _LANES), np.float32)
    m2s = np.zeros((depth, _LANES), np.float32)
    m1v = np.zeros(_LANES, np.float32)
    m2v = np.zeros(_LANES, np.float32)
    for r in range(rows):
        row = x[r]
        counts[:] = 0
        m1s[:] = 0
        m2s[:] = 0
        for i in range(m):
            m0 = min(_CHUNK, n - i * _CHUNK)
            z = np.float32(0)
            a0, a1, a2, a3, a4, a5, a6, a7 = z, z, z, z, z, z, z, z  # the lanes' means
            b0, b1, b2, b3, b4, b5, b6, b7 = z, z, z, z, z, z, z, z  # and m2 (in registers)
            for j in range(m0):
                at, w = (i * _CHUNK + j) * _LANES, inverse[j]
                a0, b0 = _step(row[at], w, a0, b0)
                a1, b1 = _step(row[at + 1], w, a1, b1)
                a2, b2 = _step(row[at + 2], w, a2, b2)
                a3, b3 = _step(row[at + 3], w, a3, b3)
                a4, b4 = _step(row[at + 4], w, a4, b4)
                a5, b5 = _step(row[at + 5], w, a5, b5)
                a6, b6 = _step(row[at + 6], w, a6, b6)
                a7, b7 = _step(row[at + 7], w, a7, b7)
            m1v[0], m1v[1], m1v[2], m1v[3], m1v[4], m1v[5], m1v[6], m1v[7] = a0, a1, a2, a3, a4, a5, a6, a7
            m2v[0], m2v[1], m2v[2], m2v[3], m2v[4], m2v[5], m2v[6], m2v[7] = b0, b1, b2, b3, b4, b5, b6, b7
            _merge(m0, m1v, m2v, 0, counts, m1s, m2s)
            mask = i + 1
            j = 1
            while j < depth and (mask & 1) == 0:
                _merge(counts[j - 1], m1s[j - 1], m2s[j - 1], j, counts, m1s, m2s)
                counts[j - 1] = 0
                m1s[j - 1] = 0
                m2s[j - 1] = 0
                mask >>= 1
                j += 1
        for j in range(1, depth):
            _merge(counts[j], m1s[j], m2s[j], 0, counts, m1s, m2s)
        c0, c1, c2 = 0, np.float32(0), np.float32(0)
        for k in range(n * _LANES, size):
            delta = row[k] - c1
            c0 += 1
            c1 += delta / np.float32(c0)
            c2 = fma32(delta, row[k] - c1, c2)
        for k in range(_LANES):
            c0, c1, c2 = _add_moments(n, m1s[0, k], m2s[0, k], c0, c1, c2)
        var = c2 / np.float32(size)
        mean[r] = c1
        rstd[r] = np.float32(1) / np.sqrt(max(var, np.float32(0)) + eps)


@njit(contract=False)
def _merge(count, m1_add, m2_add, level, counts, m1s, m2s):  # pragma: no cover - compiled
    """``AddMomentsVec``: a vector of moments (``count`` elements a lane) merged into the
    cascade's ``level``, its steps as measured against PyTorch's build: ``m1 + c * delta``
    unfused, ``m2`` as ``fma(delta**2, c * m0, m2 + m2_add)``."""
    n = counts[level] + count
    c = np.float32(0) if n == 0 else np.float32(count) / np.float32(n)
    m0 = np.float32(counts[level])
    for k in range(_LANES):
        delta = m1_add[k] - m1s[level, k]
        m1s[level, k] = m1s[level, k] + c * delta
        m2s[level, k] = fma32(delta * delta, c * m0, m2s[level, k] + m2_add[k])
    counts[level] = n
