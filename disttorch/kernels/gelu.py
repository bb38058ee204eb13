"""Exact GELU on NumPy arrays (NumPy has no ``erf``): ``gelu_with_derivative(x)`` returns
``x * Phi(x)`` and ``Phi(x) + x phi(x)`` for the standard normal CDF ``Phi`` and density
``phi``.

float16/float32 arrays use Abramowitz & Stegun 7.1.26 for ``erfc`` (absolute error
< 1.5e-7, float32's resolution) in the array's own dtype, with in-place steps over
cache-sized blocks; its ``exp(-x^2/2)`` factor is the density's too, so both come from
one ``exp``. The polynomial is rescaled to be monic, which saves the leading multiply and
the final scaling (``_normal_block``).

float64 arrays use the package's one ``erf`` (``kernels/erf.py``), to float64 precision.

``gelu_tanh_with_derivative(x)`` does the same for the tanh approximation
``0.5 x (1 + tanh(u))``, ``u = sqrt(2/pi) (x + 0.044715 x^3)``, sharing one ``tanh``.
Measured by ``benchmarks/kernels.py``.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .erf import erf
from .jit import compiled
from .tensor_iterator import in_memory_order
from .threads import map_rows, parallel_for

__all__ = ["gelu_with_derivative", "gelu_tanh_with_derivative"]

_SQRT_HALF = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
# Abramowitz & Stegun 7.1.26: erfc(z) = (a1 t + ... + a5 t^5) exp(-z^2), t = 1 / (1 + p z).
_AS_P = 0.3275911
_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
# With z = |x| / sqrt 2, t = beta / (|x| + beta); over s = gamma t (0.5 a5 t^5 = s^5) the
# polynomial of Phi(-|x|) = 0.5 erfc(z) is monic: s^5 + c4 s^4 + ... + c1 s.
_BETA = math.sqrt(2) / _AS_P
_GAMMA = (0.5 * _AS_A[4]) ** 0.2
_MONIC = tuple(0.5 * a / _GAMMA ** (i + 1) for i, a in enumerate(_AS_A[:4]))  # c1..c4


_BLOCK = 65536  # entries per block: the temporaries of one block stay in cache


def _normal_block(x: np.ndarray, cdf: np.ndarray, kernel: np.ndarray, s: np.ndarray) -> None:
    """Write Phi(x) into ``cdf`` and exp(-x^2/2) into ``kernel`` (``s``: scratch).

    The lower tail Q = Phi(-|x|) = (s^5 + c4 s^4 + ... + c1 s) exp(-x^2/2), with
    s = gamma beta / (|x| + beta); then Phi(x) = 0.5 + sign(x) (0.5 - Q). ``0.5 - Q`` is
    never negative, so giving it the sign of ``x`` is an OR of sign bits (far cheaper than
    ``np.copysign``). Each line is one in-place pass over the block."""
    dt = x.dtype.type
    np.abs(x, out=kernel)
    np.add(kernel, dt(_BETA), out=s)
    np.divide(dt(_GAMMA * _BETA), s, out=s)
    np.add(s, dt(_MONIC[3]), out=cdf)  # Horner's rule, monic: no leading multiply
    for c in _MONIC[2::-1]:
        cdf *= s
        cdf += dt(c)
    cdf *= s
    np.multiply(kernel, kernel, out=kernel)
    kernel *= dt(-0.5)
    np.exp(kernel, out=kernel)  # exp(-x^2 / 2)
    cdf *= kernel  # Q
    np.subtract(dt(0.5), cdf, out=cdf)  # 0.5 - Q = |Phi(x) - 0.5|
    bits = np.dtype(f"u{x.itemsize}")
    sign = s.view(bits)
    np.bitwise_and(x.view(bits), bits.type(1 << (8 * x.itemsize - 1)), out=sign)
    np.bitwise_or(cdf.view(bits), sign, out=cdf.view(bits))
    cdf += dt(0.5)  # Phi(x)


def _gelu_float32(x: np.ndarray, with_derivative: bool) -> tuple:
    """``x * Phi(x)`` and (optionally) ``Phi(x) + x phi(x)``, block by block, so that the
    about twenty in-place passes of each block run in cache; the op's threads take ranges
    of blocks (the same numbers for any thread count). With numba a float32 block is two
    compiled loops around NumPy's ``exp`` (:mod:`disttorch.kernels.gelu_blocks`, the same
    numbers)."""
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty_like(flat)
    local = np.empty_like(flat) if with_derivative else None
    inv_sqrt_2pi = flat.dtype.type(_INV_SQRT_2PI)
    loops = compiled(_load_blocks) if flat.dtype == np.float32 else None
    k = np.array([_BETA, _GAMMA * _BETA, *_MONIC[::-1], -0.5, 0.5, _INV_SQRT_2PI], dtype=flat.dtype)
    no_local = flat[:0]

    def blocks(first: int, last: int) -> None:
        n = min(_BLOCK, flat.size)
        cdf, kernel, scratch = (np.empty(n, dtype=flat.dtype) for _ in range(3))
        for start in range(first * _BLOCK, min(last * _BLOCK, flat.size), _BLOCK):
            stop = min(start + _BLOCK, flat.size)
            xs, m = flat[start:stop], stop - start
            if loops is not None:
                loops.before_exp(xs, k, cdf[:m], kernel[:m])
                np.exp(kernel[:m], out=kernel[:m])
                loops.after_exp(
                    xs,
                    k,
                    cdf[:m],
                    kernel[:m],
                    out[start:stop],
                    no_local if local is None else local[start:stop],
                )
                continue
            _normal_block(xs, cdf[:m], kernel[:m], scratch[:m])
            np.multiply(xs, cdf[:m], out=out[start:stop])
            if with_derivative:
                d = local[start:stop]
                np.multiply(xs, kernel[:m], out=d)
                d *= inv_sqrt_2pi
                d += cdf[:m]

    # units of work an element (see threads.MIN_PART_ELEMENTS): measured so that a split
    # starts to pay at about 512k elements with the compiled loops, at some 40k without
    parallel_for(-(-flat.size // _BLOCK), blocks, work=(3 if loops is not None else 40) * flat.size)
    return out.reshape(x.shape), (local.reshape(x.shape) if with_derivative else None)


def _load_blocks():
    from . import gelu_blocks

    return gelu_blocks


def gelu_with_derivative(x: np.ndarray, with_derivative: bool) -> tuple:
    """``(x * Phi(x), Phi(x) + x phi(x) or None)`` in ``x``'s dtype: exact GELU and, when
    asked, its derivative (computed alongside, while the block is in cache)."""
    if x.dtype != np.float64:
        return in_memory_order(_gelu_float32, x, with_derivative)
    return in_memory_order(_by_rows, x, _gelu_float64, with_derivative)


def _by_rows(x: np.ndarray, kernel: Callable, with_derivative: bool) -> tuple:
    """``kernel(x, with_derivative)`` over the flat ``x``, split over the op's threads."""
    flat = np.ascontiguousarray(x).reshape(-1)
    parts = map_rows(
        lambda rows: tuple(a for a in kernel(rows, with_derivative) if a is not None),
        flat,
        work=30 * flat.size,
    )
    return parts[0].reshape(x.shape), (parts[1].reshape(x.shape) if with_derivative else None)


def _gelu_float64(x: np.ndarray, with_derivative: bool) -> tuple:
    cdf = erf(x * _SQRT_HALF)
    cdf += 1
    cdf *= 0.5
    local = cdf + x * np.exp(-0.5 * x * x) * _INV_SQRT_2PI if with_derivative else None
    return x * cdf, local


_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_TANH_K = 0.044715


def gelu_tanh_with_derivative(x: np.ndarray, with_derivative: bool) -> tuple:
    """``0.5 x (1 + tanh(u))`` and (when asked, else ``None``) its derivative
    ``0.5 (1 + tanh(u)) + 0.5 x (1 - tanh(u)^2) u'``, in ``x``'s dtype."""
    return in_memory_order(_by_rows, x, _gelu_tanh, with_derivative)


def _gelu_tanh(x: np.ndarray, with_derivative: bool) -> tuple:
    x2 = x * x
    th = np.tanh(_SQRT_2_OVER_PI * (x + _TANH_K * x2 * x))
    half_1p = 0.5 * (1 + th)
    out = x * half_1p
    if not with_derivative:
        return out, None
    du = _SQRT_2_OVER_PI * (1 + 3 * _TANH_K * x2)
    return out, half_1p + 0.5 * x * (1 - th * th) * du
