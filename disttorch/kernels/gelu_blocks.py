"""Exact GELU's arithmetic on one float32 block (see :mod:`disttorch.kernels.gelu`), as two
compiled loops (numba, the ``fast`` extra) around NumPy's ``exp``: three calls a block
instead of some twenty in-place passes.

The NumPy form's passes let go of the GIL and take it back at every call; split over
threads, each thread's twenty calls a block queued for the GIL behind the others' (the GELU
of ``benchmarks/train_step.py``'s GPT took twice as long on two threads as on one). Here a
block is three calls. The loops make the NumPy form's operations in its order, each
rounded to float32 on its own (``njit(contract=False)``: no fused multiply-adds), and the
exponential stays NumPy's, so the numbers are the same bit for bit (a NaN may carry another
payload: NumPy's own passes keep the input's in their vector loops, not in their tails).

``k`` holds the float32 constants: ``beta, gamma * beta, c4, c3, c2, c1, -0.5, 0.5,
1/sqrt(2 pi)``.

- ``before_exp(x, k, cdf, kernel)``: ``cdf`` = the monic polynomial of ``Phi(-|x|)``'s
  tail, ``kernel`` = ``-x^2 / 2``.
- ``after_exp(x, k, cdf, kernel, out, local)``: with ``kernel`` = ``exp(-x^2 / 2)``, ``out``
  = ``x Phi(x)`` and, when ``local`` is not empty, ``local`` = ``Phi(x) + x phi(x)``.

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

import numpy as np

from .jit import njit

__all__ = ["after_exp", "before_exp"]

_SIGN = np.uint32(1 << 31)


@njit(contract=False)
def before_exp(x, k, cdf, kernel):  # pragma: no cover - compiled
    beta, gamma_beta, c4, c3, c2, c1, minus_half = k[0], k[1], k[2], k[3], k[4], k[5], k[6]
    for j in range(x.size):
        a = abs(x[j])
        s = gamma_beta / (a + beta)
        cdf[j] = ((((s + c4) * s + c3) * s + c2) * s + c1) * s
        kernel[j] = (a * a) * minus_half


@njit(contract=False)
def after_exp(x, k, cdf, kernel, out, local):  # pragma: no cover - compiled
    x_bits, half, inv_sqrt_2pi = x.view(np.uint32), k[7], k[8]
    if local.size:
        for j in range(x.size):
            phi = _phi(x_bits[j], half - cdf[j] * kernel[j], half)
            out[j] = x[j] * phi
            local[j] = (x[j] * kernel[j]) * inv_sqrt_2pi + phi
    else:
        for j in range(x.size):
            out[j] = x[j] * _phi(x_bits[j], half - cdf[j] * kernel[j], half)


@njit(contract=False)
def _phi(x_bits, tail, half):  # pragma: no cover - compiled
    """``Phi(x)`` from ``tail = |Phi(x) - 0.5|``: the NumPy form ORs the sign bit of ``x``
    into ``tail``'s (``-abs`` sets it, keeping a NaN's payload) and adds 0.5."""
    return (-abs(tail) if x_bits & _SIGN else tail) + half
