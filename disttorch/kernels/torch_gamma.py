"""PyTorch's CPU gamma and Dirichlet samplers on an :class:`MT19937Engine`, so that a seed
gives PyTorch's ``Gamma``, ``Chi2``, ``Beta``, ``Dirichlet``, ``StudentT`` ... samples.

Both are sequential rejection samplers, one element after the other in C order, as
PyTorch's serial kernels: Marsaglia and Tsang's method (doi:10.1145/358407.358414), boosted
for ``alpha < 1`` by a uniform to the power ``1 / alpha``. Each step takes 53-bit uniforms
(``uniform_real_distribution<double>``) and standard normals (``normal_distribution<double>``:
Box-Muller pairs, the second one kept in the engine for the next call) from the engine, and
does PyTorch's arithmetic: double precision, with ``alpha``, ``1 / alpha`` and
``alpha - 1/3`` in the input's own precision for a float32 gamma. One Python step per draw.
"""

from __future__ import annotations

import math

import numpy as np

from .mt19937 import MT19937Engine
from .torch_random import UniformTape

__all__ = ["standard_gamma", "dirichlet"]

_THIRD_F32 = np.float32(1) / np.float32(3)  # PyTorch's ``1.0f / 3.0f``
_SQUEEZE = float(np.float32(0.0331))  # PyTorch's ``0.0331f``


class _Normal:
    """``normal_distribution<double>(0, 1)``, one call at a time over ``uniform``; starts
    from (and leaves) the engine's cached second sample."""

    def __init__(self, engine: MT19937Engine, uniform: UniformTape) -> None:
        self._engine, self._uniform = engine, uniform
        self._cached, engine.next_double_normal = engine.next_double_normal, None

    def __call__(self) -> float:
        if self._cached is not None:
            value, self._cached = self._cached, None
            return value
        u1, u2 = self._uniform(), self._uniform()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        self._cached = r * math.sin(theta)
        return r * math.cos(theta)

    def close(self) -> None:
        self._engine.next_double_normal = self._cached


def _gamma_one(alpha: float, narrow: bool, uniform: UniformTape, normal: _Normal) -> float:
    """One ``Gamma(alpha, 1)`` draw (before the cast to the result's dtype)."""
    f = np.float32 if narrow else float
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        scale *= (1.0 - uniform()) ** float(f(1.0) / f(alpha))
        alpha = f(alpha) + f(1.0)
    d = float(f(alpha) - f(_THIRD_F32))
    c = 1.0 / math.sqrt(9.0 * d) if d > 0 else math.nan  # (alpha < 0: C's sqrt gives NaN, so does the draw)
    while True:
        x = normal()
        y = 1.0 + c * x
        while y <= 0:
            x = normal()
            y = 1.0 + c * x
        v = y * y * y
        u = 1.0 - uniform()
        xx = x * x
        if u < 1.0 - _SQUEEZE * xx * xx or math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def _gammas(engine: MT19937Engine, alpha: np.ndarray, narrow: bool) -> np.ndarray:
    """Draws for every element of ``alpha`` in C order, as float64."""
    uniform = UniformTape(engine, 4 * alpha.size + 16)
    normal = _Normal(engine, uniform)
    try:
        flat = [_gamma_one(a, narrow, uniform, normal) for a in alpha.reshape(-1).tolist()]
    finally:
        normal.close()
        uniform.close()
    return np.array(flat, dtype=np.float64).reshape(alpha.shape)


def _at_least_tiny(draws: np.ndarray, tiny: float) -> np.ndarray:
    """``std::max(tiny, draw)`` as PyTorch's kernel clamps: a NaN draw (a negative alpha) gives ``tiny``."""
    return np.where(tiny < draws, draws, tiny).astype(draws.dtype, copy=False)


def standard_gamma(engine: MT19937Engine, alpha: np.ndarray) -> np.ndarray:
    """PyTorch's ``_standard_gamma`` of a float32 or float64 ``alpha``: at least the dtype's
    smallest normal number."""
    draws = _gammas(engine, alpha, narrow=alpha.dtype == np.float32).astype(alpha.dtype)
    return _at_least_tiny(draws, np.finfo(alpha.dtype).tiny)


def dirichlet(engine: MT19937Engine, alpha: np.ndarray) -> tuple:
    """PyTorch's ``_sample_dirichlet``: gamma draws in float64 (at least its smallest normal
    number), divided by their sum over the last dim, cast and kept inside ``(0, 1)``.
    Returns ``(sample, the float64 gamma draws)``."""
    gammas = _at_least_tiny(_gammas(engine, alpha, narrow=False), np.finfo(np.float64).tiny)
    ratio = (gammas / gammas.sum(-1, keepdims=True)).astype(alpha.dtype)
    top = np.nextafter(alpha.dtype.type(1), alpha.dtype.type(0))
    return np.clip(ratio, np.finfo(alpha.dtype).tiny, top), gammas
