"""PyTorch's CPU binomial sampler on an :class:`MT19937Engine`, so that a seed gives
PyTorch's ``torch.binomial`` and ``Binomial`` samples.

One element after the other in C order, each from 53-bit uniforms: for ``count * p >= 10``
Hörmann's transformed rejection with squeeze (BTRS, as PyTorch writes it: its log-ratio test
takes the log of the left side only), below that the inversion by geometric waiting times;
for ``p > 0.5`` the count of failures is drawn. The arithmetic is PyTorch's: ``count`` and
``p`` stay in the input's precision (float32 products for float32 tensors), the rest is
double. One Python step per draw.
"""

from __future__ import annotations

import math

import numpy as np

from .mt19937 import MT19937Engine
from .torch_random import UniformTape

__all__ = ["binomial"]

# log(k!) - the Stirling approximation of it, for k = 0..9 (beyond: its asymptotic series)
_STIRLING_TAIL = (
    0.0810614667953272,
    0.0413406959554092,
    0.0276779256849983,
    0.02079067210376509,
    0.0166446911898211,
    0.0138761288230707,
    0.0118967099458917,
    0.0104112652619720,
    0.00925546218271273,
    0.00833056343336287,
)


def _stirling_tail(k: float) -> float:
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _inversion(count, p, f, uniform: UniformTape):
    """The number of geometric waiting times (of success probability ``p``) that fit in ``count``."""
    logprob = float(np.log1p(-p)) if f is np.float32 else math.log1p(-p)
    geom_sum, num_geom = 0.0, f(0)
    while True:
        geom_sum += math.ceil(math.log(uniform()) / logprob)
        if geom_sum > count:
            return num_geom
        num_geom = num_geom + f(1)


def _btrs(count, p, f, uniform: UniformTape):
    stddev = float(np.sqrt(count * p * (f(1) - p))) if f is np.float32 else math.sqrt(count * p * (1 - p))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * float(p)
    c = float(count * p) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(p / (f(1) - p))
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor(float((count + f(1)) * p))
    while True:
        u = uniform() - 0.5
        v = uniform()
        us = 0.5 - abs(u)
        k = f(math.floor((2 * a / us + b) * u + c))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        bound = (
            (m + 0.5) * math.log((m + 1) / (r * (float(count) - m + 1)))
            + float(count + f(1)) * math.log((float(count) - m + 1) / float(count - k + f(1)))
            + (float(k) + 0.5) * math.log(r * float(count - k + f(1)) / float(k + f(1)))
            + _stirling_tail(m)
            + _stirling_tail(float(count) - m)
            - _stirling_tail(float(k))
            - _stirling_tail(float(count - k))
        )
        if v <= bound:
            return k


def _binomial_one(count, p, f, uniform: UniformTape) -> float:
    if count <= 0.0 or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return float(count)
    if p <= 0.5:
        draw = _btrs if count * p >= 10.0 else _inversion
        return float(draw(count, p, f, uniform))
    q = f(1.0 - float(p))
    draw = _btrs if count * q >= 10.0 else _inversion
    return float(count - draw(count, q, f, uniform))


def binomial(engine: MT19937Engine, count: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """PyTorch's ``binomial`` of float32 or float64 ``count`` and ``prob`` of one shape (no
    NaN: the caller marks those)."""
    f = np.float32 if count.dtype == np.float32 else float
    uniform = UniformTape(engine, 2 * count.size + 16)
    try:
        pairs = zip(count.reshape(-1).tolist(), prob.reshape(-1).tolist())
        draws = [_binomial_one(f(n), f(p), f, uniform) for n, p in pairs]
    finally:
        uniform.close()
    return np.array(draws, dtype=count.dtype).reshape(count.shape)
