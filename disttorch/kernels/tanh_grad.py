"""tanh's gradient ``g * (1 - y * y)`` from its output ``y``, rounded as PyTorch's float32 kernel
rounds it: ``1 - y * y`` once (a fused multiply-add; float32's square is exact in float64), then
the product with ``g``.

The NumPy form builds a float64 square, a float64 difference and a float32 copy of it before
the product: four passes over memory and a temporary twice the input's size. With numba (the
``fast`` extra) float32 inputs take one compiled loop doing the same arithmetic element by
element: the same numbers, bit for bit.
"""

from __future__ import annotations

import numpy as np

from .fma import fma
from .jit import compiled

__all__ = ["one_minus_square", "tanh_grad"]


def one_minus_square(y: np.ndarray) -> np.ndarray:
    """``1 - y * y`` rounded once for float32 (:func:`~disttorch.kernels.fma.fma`); other dtypes
    as NumPy computes it."""
    if y.dtype == np.float32:
        return fma(y, -y, 1.0)
    return 1 - y * y


def tanh_grad(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``g * one_minus_square(y)``."""
    loop = compiled(_load) if g.dtype == y.dtype == np.float32 and g.shape == y.shape else None
    if loop is None:
        return g * one_minus_square(y)
    out = np.empty(y.shape, np.float32)
    loop(np.ascontiguousarray(g).reshape(-1), np.ascontiguousarray(y).reshape(-1), out.reshape(-1))
    return out


def _load():
    import numba

    from .jit import njit

    @njit(contract=False)
    def times_one_minus_square(g, y, out):  # pragma: no cover - compiled
        for i in range(y.size):
            v = numba.float64(y[i])
            out[i] = g[i] * numba.float32(1.0 - v * v)

    return times_one_minus_square
