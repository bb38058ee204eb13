"""Compiled loop of :mod:`disttorch.kernels.torch_var` (numba, the ``fast`` extra): PyTorch's
CPU Welford reduction (``WelfordOps`` in float64), every operation rounded on its own
(``njit(contract=False)``: PyTorch's kernel has no fused multiply-add there).

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

import math

from .jit import njit

__all__ = ["welford"]


@njit(contract=False)
def welford(buf, bases, outs, steps, correction, take_sqrt, out, means):  # pragma: no cover - compiled
    """For each ``t``: the elements ``buf[bases[t] + steps[i]]`` in order of ``i``, one Welford
    step each in float64 (``delta = x - mean; mean += delta / n; m2 += delta * (x - mean)``);
    ``out[outs[t]] = m2 / (n - correction)`` (divided by 0 when not positive), or its square
    root, and ``means[outs[t]] = mean``, each rounded once to the arrays' dtype."""
    for t in range(bases.size):
        base = bases[t]
        mean = 0.0
        m2 = 0.0
        for i in range(steps.size):
            v = float(buf[base + steps[i]])
            delta = v - mean
            mean = mean + delta / float(i + 1)
            m2 = m2 + delta * (v - mean)
        n = float(steps.size)
        var = m2 / (n - correction if n > correction else 0.0)
        out[outs[t]] = math.sqrt(var) if take_sqrt else var
        means[outs[t]] = mean
