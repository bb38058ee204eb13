"""Compiled loops of :mod:`disttorch.kernels.max_pool` (numba, the ``fast`` extra): one
stage of max pooling (the max over one spatial dim's kernel offsets) and its adjoint, in
one pass over memory without the GIL, where the NumPy form makes two or three passes per
kernel offset.

A stage sees its arrays flat, as ``(outer, length, inner)`` in C order: ``length`` the
pooled dim, ``inner`` the elements after it (1 for the last dim). Each loop does, element
by element, what the NumPy form's calls do, so it gives their bits: NumPy's ``maximum``
(a NaN operand wins, the first of two; of equal operands, ``+0.0`` and ``-0.0``, the
second), the first offset holding the maximum (strict ``>``) or the last holding a NaN as
the winner (PyTorch's choice), and the gradient's products and sums in offset order.

Most pooling has windows of two that tile the dim (``MaxPool2d(2)``); there the loops read
pairs at a constant distance, which the compiler turns into vector instructions (4 MiB of
float32 pairs in 0.4 ms on one core of the 2-core machine, against 1.0 ms for a loop over
any window: a loop of one or two turns per window is mostly its own bookkeeping). Indices
are unsigned, so that numba does not check each for a negative value.

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

import numpy as np

from .jit import njit

__all__ = ["max_stage", "scatter_winners"]

_U = np.uint64


@njit(contract=False)
def _keep(b, c):  # pragma: no cover - compiled
    """Whether NumPy's ``maximum(b, c)`` is ``b``."""
    return (b > c) | (b != b)


@njit(contract=False)
def _wins(c, b):  # pragma: no cover - compiled
    """Whether ``c`` takes over from the maximum ``b`` so far as the winner: greater, or NaN."""
    return (c > b) | (c != c)


@njit(contract=False)
def _geometry(outer, length, inner, kernel, stride, dilation, pooled):  # pragma: no cover
    """A stage's sizes as unsigned ints, its output length (``pooled`` elements over ``outer *
    inner``), and whether its windows are the pairs that tile the last dim."""
    outer, length, inner = _U(outer), _U(length), _U(inner)
    kernel, stride, dilation = _U(kernel), _U(stride), _U(dilation)
    out = _U(pooled) // (outer * inner)
    pairs = inner == 1 and kernel == 2 and stride == 2 and dilation == 1 and length == 2 * out
    return outer, length, inner, kernel, stride, dilation, out, pairs


@njit(contract=False)
def _max_pairs(a, best, winners):  # pragma: no cover - compiled
    """Windows ``(a[2p], a[2p + 1])``."""
    for p in range(_U(best.size)):
        b, c = a[_U(2) * p], a[_U(2) * p + _U(1)]
        winners[p] = _wins(c, b)
        best[p] = b if _keep(b, c) else c


@njit(contract=False)
def _max_rows(a, src, step, kernel, inner, best, winners, dst):  # pragma: no cover - compiled
    """One window along an earlier dim: rows ``a[src + k * step : ... + inner]``, ``k <
    kernel``, into ``best[dst : dst + inner]`` (the first two offsets in one pass)."""
    second = src + step if kernel > 1 else src
    for j in range(inner):
        b, c = a[src + j], a[second + j]
        winners[dst + j] = _wins(c, b) and kernel > 1
        best[dst + j] = b if _keep(b, c) else c
    for k in range(_U(2), kernel):
        row = src + k * step
        for j in range(inner):
            b, c = best[dst + j], a[row + j]
            winners[dst + j] = np.uint8(k) if _wins(c, b) else winners[dst + j]
            best[dst + j] = b if _keep(b, c) else c


@njit(contract=False)
def max_stage(a, outer, length, inner, kernel, stride, dilation, best, winners):  # pragma: no cover
    """``best[i, o, j]``: the maximum of ``a[i, o * stride + k * dilation, j]`` over the
    offsets ``k < kernel``; ``winners[i, o, j]``: the first ``k`` holding it (flat arrays:
    ``a`` is ``(outer, length, inner)``, ``best`` and ``winners`` ``(outer, out, inner)``)."""
    outer, length, inner, kernel, stride, dilation, out, pairs = _geometry(
        outer, length, inner, kernel, stride, dilation, best.size
    )
    if pairs:
        _max_pairs(a, best, winners)
        return
    for i in range(outer):
        for o in range(out):
            dst = (i * out + o) * inner
            src = (i * length + o * stride) * inner
            if inner > 1:
                _max_rows(a, src, dilation * inner, kernel, inner, best, winners, dst)
                continue
            b, w = a[src], _U(0)
            for k in range(_U(1), kernel):
                c = a[src + k * dilation]
                w = k if _wins(c, b) else w
                b = b if _keep(b, c) else c
            best[dst], winners[dst] = b, w


@njit(contract=False)
def _scatter_pairs(g, winners, ga):  # pragma: no cover - compiled
    """The adjoint of :func:`_max_pairs`: ``g * w`` to offset 1, ``g`` less that to 0."""
    for p in range(_U(g.size)):
        x = g[p]
        sent = x * winners[p]
        ga[_U(2) * p + _U(1)] = sent
        ga[_U(2) * p] = x - sent


@njit(contract=False)
def scatter_winners(g, winners, outer, length, inner, kernel, stride, dilation, ga):  # pragma: no cover
    """The adjoint of :func:`max_stage`: ``g[i, o, j]`` to ``ga[i, o * stride + k *
    dilation, j]`` for the winning ``k``, as ``g * (winner == k)`` at every offset, added
    to ``ga`` in offset order where windows overlap (``ga`` holds zeros where no window
    reaches); two disjoint offsets get ``g * winner`` and ``g`` less that."""
    outer, length, inner, kernel, stride, dilation, out, pairs = _geometry(
        outer, length, inner, kernel, stride, dilation, g.size
    )
    if pairs:
        _scatter_pairs(g, winners, ga)
        return
    disjoint = stride >= dilation * (kernel - _U(1)) + _U(1)
    one, zero = g.dtype.type(1), g.dtype.type(0)
    for i in range(outer):
        for k in range(kernel):
            for o in range(out):
                src = (i * out + o) * inner
                dst = (i * length + o * stride + k * dilation) * inner
                for j in range(inner):
                    x, w = g[src + j], winners[src + j]
                    if kernel == 2 and disjoint:
                        sent = x * w
                        ga[dst + j] = sent if k else x - sent
                    elif disjoint:
                        ga[dst + j] = x * (one if w == k else zero)
                    else:
                        ga[dst + j] += x * (one if w == k else zero)
