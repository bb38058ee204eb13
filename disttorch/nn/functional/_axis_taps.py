"""``AxisTaps``: an op that rebuilds one axis of a tensor from a few weighted gathers
along it, ``out = sum_t take(x, idx_t, axis) * w_t``. Interpolation (1, 2 or 4 taps per
output position) and the index-based paddings (reflect, replicate, circular: one tap)
are such ops. Backward adds every tap's weighted gradient back to its source positions:
the outputs are ordered by source (a stable argsort, skipped when the indices are already
sorted) and each run of equal sources is summed by one ``np.add.reduceat``, no
per-element scatter. The op and its adjoint are each other's backward, so gradients of
any order are exact."""

from __future__ import annotations

import numpy as np

from ...autograd.function import Function

__all__ = ["AxisTaps", "AxisTapsAdjoint"]


class AxisTaps(Function):
    """``forward(x, axis, taps)`` with ``taps`` a list of ``(indices, weights or None)``,
    each of the output length along ``axis``."""

    _raw = True

    @staticmethod
    def forward(ctx, x, axis, taps):
        a = x._data
        view = [1] * a.ndim
        view[axis] = -1
        out = None
        for idx, w in taps:
            term = np.take(a, idx, axis=axis)
            if w is not None:
                term *= w.astype(a.dtype).reshape(view)
            if out is None:
                out = term
            else:
                out += term
        ctx.axis, ctx.taps, ctx.size = axis, taps, a.shape[axis]
        return out

    @staticmethod
    def backward(ctx, grad):
        return AxisTapsAdjoint.apply(grad, ctx.axis, ctx.taps, ctx.size), None, None


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


def _adjoint(g: np.ndarray, axis: int, taps: list, size: int) -> np.ndarray:
    shape = list(g.shape)
    shape[axis] = size
    gx = np.zeros(shape, dtype=g.dtype)
    lead = (slice(None),) * axis
    view = [1] * g.ndim
    view[axis] = -1
    for idx, w in taps:
        vals = g if w is None else g * w.astype(g.dtype).reshape(view)
        if np.any(idx[1:] < idx[:-1]):
            order = np.argsort(idx, kind="stable")
            idx, vals = idx[order], np.take(vals, order, axis=axis)
        uniq, starts = np.unique(idx, return_index=True)
        sums = np.add.reduceat(vals, starts, axis=axis)
        if uniq[-1] - uniq[0] + 1 == uniq.size:  # a contiguous range of sources: a slice
            gx[lead + (slice(int(uniq[0]), int(uniq[-1]) + 1),)] += sums
        else:
            gx[lead + (uniq,)] += sums
    return gx
