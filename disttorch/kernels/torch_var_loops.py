"""Compiled loop of :mod:`disttorch.kernels.torch_var` (numba, the ``fast`` extra): PyTorch's
CPU Welford reduction (``WelfordOps`` in float64), every operation rounded on its own
(``njit(contract=False)``: PyTorch's kernel has no fused multiply-add there).

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

import math

from .jit import njit

__all__ = ["welford", "welford_piece"]


@njit(contract=False)
def welford_piece(buf, base, steps, begin, end):  # pragma: no cover - compiled
    """``(mean, m2, n)`` of ``buf[base + steps[i]]`` for ``i`` in ``[begin, end)`` in order,
    one Welford step each in float64 (``delta = x - mean; mean += delta / n; m2 += delta *
    (x - mean)``), from an empty accumulator."""
    mean = 0.0
    m2 = 0.0
    for i in range(begin, end):
        v = float(buf[base + steps[i]])
        delta = v - mean
        mean = mean + delta / float(i - begin + 1)
        m2 = m2 + delta * (v - mean)
    return mean, m2, float(end - begin)


@njit(contract=False)
def welford(buf, bases, outs, steps, correction, take_sqrt, out, means):  # pragma: no cover - compiled
    """For each ``t``: the elements ``buf[bases[t] + steps[i]]`` in order of ``i`` through
    :func:`welford_piece`; ``out[outs[t]] = m2 / (n - correction)`` (divided by 0 when not
    positive), or its square root, and ``means[outs[t]] = mean``, each rounded once to the
    arrays' dtype."""
    for t in range(bases.size):
        mean, m2, n = welford_piece(buf, bases[t], steps, 0, steps.size)
        var = m2 / (n - correction if n > correction else 0.0)
        out[outs[t]] = math.sqrt(var) if take_sqrt else var
        means[outs[t]] = mean
