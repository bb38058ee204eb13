"""``AxisTaps``: an op that rebuilds one axis of a tensor from a few weighted gathers
along it, ``out = sum_t take(x, idx_t, axis) * w_t``. Interpolation (1, 2 or 4 taps per
output position; anti-aliased, as many as its stretched filter covers) and the index-based
paddings (reflect, replicate, circular: one tap) are such ops. A tap may name the outputs
that add it with one fused multiply-add (``kernels/fma.py``), where PyTorch's compiled
kernel fuses that step. Backward adds every tap's weighted gradient back to its source positions:
the outputs are ordered by source (a stable argsort, skipped when the indices are already
sorted) and each run of equal sources is summed by one ``np.add.reduceat``, no
per-element scatter. The op and its adjoint are each other's backward, so gradients of
any order are exact.

Both directions split over the op's threads along the other dims (the batch, the
channels): each thread gathers (or sums back) its own slices with the same NumPy calls, so
the bits do not depend on the thread count."""

from __future__ import annotations

import numpy as np

from ...autograd.function import Function
from ...kernels.fma import fma
from ...kernels.threads import parallel_over

#: Units of work per element and tap (``kernels/threads.py``): a gather along an axis
#: reads with a stride, as a copy of a transposed view does.
_TAP_WORK = 4

__all__ = ["AxisTaps", "AxisTapsAdjoint"]


class AxisTaps(Function):
    """``forward(x, axis, taps, forward_taps=None)`` with ``taps`` a list of ``(indices,
    weights or None)`` or ``(indices, weights, fused)``, each of the output length along
    ``axis``; ``fused`` (bool) marks the outputs that add this tap with one fused
    multiply-add. ``forward_taps``, when given, are the same taps with the weights the
    forward multiplies by (a 16-bit kernel's weights, rounded to its dtype), the backward
    keeping ``taps``' exact ones."""

    _raw = True

    @staticmethod
    def forward(ctx, x, axis, taps, forward_taps=None):
        a = x._data
        ctx.axis, ctx.taps, ctx.size = axis, taps, a.shape[axis]
        return _gather(a, axis, taps if forward_taps is None else forward_taps)

    @staticmethod
    def backward(ctx, grad):
        return AxisTapsAdjoint.apply(grad, ctx.axis, ctx.taps, ctx.size), None, None, None


class AxisTapsAdjoint(Function):
    """The adjoint of :class:`AxisTaps` (its backward, and vice versa: both are linear, so
    gradients of any order are exact)."""

    _raw = True

    @staticmethod
    def forward(ctx, g, axis, taps, size):
        ctx.axis, ctx.taps = axis, taps
        return _adjoint(g._data, axis, taps, size)

    @staticmethod
    def backward(ctx, grad):
        return AxisTaps.apply(grad, ctx.axis, ctx.taps), None, None, None


def _gather(a: np.ndarray, axis: int, taps: list) -> np.ndarray:
    """``sum_t take(a, idx_t, axis) * w_t``, in ``a``'s dtype."""
    shape = list(a.shape)
    shape[axis] = len(taps[0][0])
    out = np.empty(shape, dtype=a.dtype)
    view = [1] * a.ndim
    view[axis] = -1
    weights = [None if tap[1] is None else tap[1].astype(a.dtype).reshape(view) for tap in taps]
    fused = [tap[2].reshape(view) if len(tap) > 2 and tap[2].any() else None for tap in taps]

    def part(index: tuple) -> None:
        src, dst = a[index], out[index]
        for t, (tap, w, where) in enumerate(zip(taps, weights, fused)):
            # the first tap straight into place ("clip": unbuffered; the taps are in range)
            term = np.take(src, tap[0], axis=axis, out=dst if t == 0 else None, mode="clip")
            if t and where is not None:
                dst[...] = np.where(where, fma(term, w, dst), dst + term * w)
                continue
            if w is not None:
                term *= w
            if t:
                dst += term

    parallel_over(tuple(shape), part, skip=(axis,), work=_TAP_WORK * len(taps) * out.size)
    return out


def _adjoint(g: np.ndarray, axis: int, taps: list, size: int) -> np.ndarray:
    shape = list(g.shape)
    shape[axis] = size
    gx = np.zeros(shape, dtype=g.dtype)
    view = [1] * g.ndim
    view[axis] = -1
    plans = []  # per tap: its weights, the output order by source, and each source's run
    for idx, w, *_ in taps:
        order = np.argsort(idx, kind="stable") if np.any(idx[1:] < idx[:-1]) else None
        uniq, starts = np.unique(idx if order is None else idx[order], return_index=True)
        if uniq[-1] - uniq[0] + 1 == uniq.size:  # a contiguous range of sources: a slice
            uniq = slice(int(uniq[0]), int(uniq[-1]) + 1)
        plans.append((None if w is None else w.astype(g.dtype).reshape(view), order, uniq, starts))
    lead = (slice(None),) * axis

    def part(index: tuple) -> None:
        src, dst = g[index], gx[index]
        for w, order, sources, starts in plans:
            vals = src if w is None else src * w
            if order is not None:
                vals = np.take(vals, order, axis=axis)
            dst[lead + (sources,)] += np.add.reduceat(vals, starts, axis=axis)

    parallel_over(tuple(shape), part, skip=(axis,), work=_TAP_WORK * len(taps) * g.size)
    return gx
