"""Special functions with derivatives: ``lgamma``, ``digamma``, ``polygamma``, ``erfinv``
(the ones ``distributions`` needs; NumPy has none of them).

Kernels work on float arrays: ``lgamma`` by Lanczos' approximation (g = 7, 9 terms;
reflection below 1/2), ``digamma``/``polygamma`` by the recurrence up to x >= 10 (15)
and their asymptotic (Euler-Maclaurin) series, ``erfinv`` by Giles' single-precision
approximation refined by two Newton steps on float64 ``erf``. Relative accuracy is about
1e-14 away from poles and zeros.
"""

from __future__ import annotations

import math

import numpy as np

from .._dtype import get_default_dtype
from .._tensor import Tensor
from ..autograd.function import Function
from ..kernels.erf import erf as _erf64
from .elementwise import _FloatUnary, exp

__all__ = ["digamma", "erfinv", "lgamma", "polygamma"]

_LANCZOS_G = 7.0
_LANCZOS = np.array(
    [
        0.99999999999980993,
        676.5203681218851,
        -1259.1392167224028,
        771.32342877765313,
        -176.61502916214059,
        12.507343278686905,
        -0.13857109526572012,
        9.9843695780195716e-6,
        1.5056327351493116e-7,
    ]
)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
# Bernoulli numbers B_2, B_4, ..., B_16
_B2K = np.array([1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510])


def _as_float(x: np.ndarray) -> np.ndarray:
    return x if x.dtype.kind == "f" else x.astype(get_default_dtype().numpy)


def _lgamma_pos(x: np.ndarray) -> np.ndarray:
    """lgamma for x >= 1/2 (Lanczos)."""
    z = x - 1.0
    a = np.full_like(z, _LANCZOS[0])
    for i in range(1, 9):
        a += _LANCZOS[i] / (z + i)
    t = z + _LANCZOS_G + 0.5
    return _HALF_LOG_2PI + (z + 0.5) * np.log(t) - t + np.log(a)


def lgamma_np(x: np.ndarray) -> np.ndarray:
    """``log|Gamma(x)|`` of an array (``inf`` at the poles 0, -1, -2, ...)."""
    x = _as_float(np.asarray(x))
    x64 = x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.empty_like(x64)
        big = x64 >= 0.5
        out[big] = _lgamma_pos(x64[big])
        xs = x64[~big]
        sin = np.abs(np.sin(math.pi * xs))
        out[~big] = np.log(math.pi / sin) - _lgamma_pos(1.0 - xs)
        out[(x64 <= 0) & (x64 == np.floor(x64))] = np.inf
        out[np.isinf(x64)] = np.inf
    return out.astype(x.dtype, copy=False)


def digamma_np(x: np.ndarray) -> np.ndarray:
    """``d/dx lgamma(x)`` of an array (``-inf`` at 0, ``nan`` at negative integers, as PyTorch)."""
    x = _as_float(np.asarray(x))
    v = x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        neg = v <= 0
        reflect = np.zeros_like(v)
        reflect[neg] = -math.pi / np.tan(math.pi * v[neg])
        y = np.where(neg, 1.0 - v, v)
        acc = np.zeros_like(y)
        for _ in range(10):
            small = y < 10
            if not small.any():
                break
            acc -= np.where(small, 1.0 / y, 0.0)
            y = np.where(small, y + 1.0, y)
        inv2 = 1.0 / (y * y)
        series = np.zeros_like(y)
        for k in range(len(_B2K) - 1, -1, -1):
            series = series * inv2 + _B2K[k] / (2 * (k + 1))
        out = np.log(y) - 0.5 / y - series * inv2 + acc + reflect
        out[v == 0] = -np.inf
        out[neg & (v == np.floor(v)) & (v != 0)] = np.nan
    return out.astype(x.dtype, copy=False)


def _hurwitz_zeta(s: int, y: np.ndarray) -> np.ndarray:
    """``sum_k (y + k)^-s`` for integer ``s >= 2`` and ``y`` not a non-positive integer: the
    terms until ``y + k >= 15``, then the Euler-Maclaurin tail."""
    acc = np.zeros_like(y)
    shifts = int(min(max(15.0 - float(y.min(initial=15.0)), 0.0), 1e5)) + 1
    for _ in range(shifts):
        small = y < 15
        if not small.any():
            break
        acc += np.where(small, y**-s, 0.0)
        y = np.where(small, y + 1.0, y)
    tail = y ** (1 - s) / (s - 1) + 0.5 * y**-s
    rising = float(s)  # s (s+1) ... (s + 2j - 2)
    fact = 2.0  # (2j)!
    for j in range(1, len(_B2K) + 1):
        tail += _B2K[j - 1] / fact * rising * y ** (-s - 2 * j + 1)
        rising *= (s + 2 * j - 1) * (s + 2 * j)
        fact *= (2 * j + 1) * (2 * j + 2)
    return acc + tail


def polygamma_np(n: int, x: np.ndarray) -> np.ndarray:
    """The ``n``-th derivative of digamma (``n >= 1``) of an array:
    ``(-1)^(n+1) n! zeta(n + 1, x)``; at the poles ``inf`` (odd ``n``) or ``nan`` (even)."""
    x = _as_float(np.asarray(x))
    v = x.astype(np.float64)
    sign = (-1.0) ** (n + 1) * math.factorial(n)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pole = (v <= 0) & (v == np.floor(v))
        out = np.full_like(v, np.inf if n % 2 else np.nan)
        ok = ~pole & np.isfinite(v)
        out[ok] = sign * _hurwitz_zeta(n + 1, v[ok])
    return out.astype(x.dtype, copy=False)


def erfinv_np(y: np.ndarray) -> np.ndarray:
    """The inverse error function of an array (``+-inf`` at +-1, ``nan`` outside [-1, 1])."""
    y = _as_float(np.asarray(y))
    v = y.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -np.log((1.0 - v) * (1.0 + v))
        central = w < 5.0
        wc = np.where(central, w - 2.5, np.sqrt(np.maximum(w, 5.0)) - 3.0)
        pc = np.array(
            [
                2.81022636e-08,
                3.43273939e-07,
                -3.5233877e-06,
                -4.39150654e-06,
                0.00021858087,
                -0.00125372503,
                -0.00417768164,
                0.246640727,
                1.50140941,
            ]
        )
        pt = np.array(
            [
                -0.000200214257,
                0.000100950558,
                0.00134934322,
                -0.00367342844,
                0.00573950773,
                -0.0076224613,
                0.00943887047,
                1.00167406,
                2.83297682,
            ]
        )
        p = np.where(central, pc[0], pt[0])
        for a, b in zip(pc[1:], pt[1:]):
            p = p * wc + np.where(central, a, b)
        x = p * v
        finite = np.isfinite(x) & (np.abs(v) < 1)
        for _ in range(2):
            xf = x[finite]
            x[finite] = xf - (_erf64(xf) - v[finite]) / (2 / math.sqrt(math.pi) * np.exp(-xf * xf))
        x[v == 1] = np.inf
        x[v == -1] = -np.inf
        x[np.abs(v) > 1] = np.nan
    return x.astype(y.dtype, copy=False)


class Lgamma(_FloatUnary):
    ufunc = staticmethod(lgamma_np)

    @staticmethod
    def derivative(x, y):
        return digamma(x)


class Digamma(_FloatUnary):
    ufunc = staticmethod(digamma_np)

    @staticmethod
    def derivative(x, y):
        return polygamma(1, x)


class Polygamma(Function):
    """``polygamma(n, x)``; the derivative is ``polygamma(n + 1, x)``."""

    _raw = True

    @staticmethod
    def forward(ctx, n, x):
        ctx.n = n
        if ctx.needs_input_grad:
            ctx.save_for_backward(x)
        return polygamma_np(n, x._data)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return None, g * polygamma(ctx.n + 1, x)


class Erfinv(_FloatUnary):
    ufunc, uses_output = staticmethod(erfinv_np), True

    @staticmethod
    def derivative(x, y):
        return exp(y * y) * (math.sqrt(math.pi) / 2)


def lgamma(input: Tensor) -> Tensor:
    """``log|Gamma(input)|``, elementwise."""
    return Lgamma.apply(input)


def digamma(input: Tensor) -> Tensor:
    """The logarithmic derivative of Gamma, elementwise."""
    return Digamma.apply(input)


def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of ``digamma`` (``n = 0`` is ``digamma``)."""
    if not isinstance(n, int) or n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n, got n={n}")
    if n == 0:
        return digamma(input)
    return Polygamma.apply(n, input)


def erfinv(input: Tensor) -> Tensor:
    """The inverse of ``erf`` on (-1, 1), elementwise."""
    return Erfinv.apply(input)
