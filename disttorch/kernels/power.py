"""``x ** e`` for a floating array and a scalar integer or half-integer exponent, by
multiplications and one square root instead of NumPy's general ``power``, which is slow on
float32 (tens of ns an element, hundreds for negative bases). PyTorch's CPU kernel does
the same for 2, 3, -1, -2, 0.5 and -0.5: those give the same numbers as PyTorch; other
integers are computed by repeated squaring (within a few ulps of the correctly rounded
power; ``(-inf) ** 1.5`` is inf, as C's ``pow``). Large arrays split over the op's threads. Measured by ``benchmarks/kernels.py``.

Other float32 powers (tensor exponents, other scalars) are raised in float64 and rounded
once (:func:`general_power`): PyTorch's vectorised ``powf`` is within an ulp and matches
that about 98% of the time, NumPy's float32 ``power`` only about 80% (six times slower).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from .threads import elementwise

__all__ = ["MAX_EXPONENT", "general_power", "power"]

MAX_EXPONENT = 16  # |integer part| up to which multiplications beat the general power


def _integer_power(x: np.ndarray, n: int) -> np.ndarray:
    """``x ** n`` for ``n >= 1`` by repeated squaring."""
    result, base = None, x
    while True:
        if n & 1:
            result = base.copy() if result is None else np.multiply(result, base, out=result)
        n >>= 1
        if not n:
            return result
        base = base * base


def _power(x: np.ndarray, e: float) -> np.ndarray:
    if x.ndim == 0:  # (NumPy's arithmetic on 0-d arrays gives scalars, which out= cannot take)
        return _power(x.reshape(1), e).reshape(())
    n = int(e)
    if e == n:
        if n == 0:
            return np.ones_like(x)
        out = _integer_power(x, abs(n))
        return np.reciprocal(out, out=out) if n < 0 else out
    root = np.sqrt(x)  # a half-integer: x ** (n + 0.5) = x ** n * sqrt(x)
    if not n:  # sqrt and rsqrt, as PyTorch: sqrt(-0.0) = -0.0, sqrt(-inf) = nan
        return np.reciprocal(root, out=root) if e < 0 else root
    whole = _integer_power(x, abs(n))
    whole *= root
    if e < 0:
        np.reciprocal(whole, out=whole)
    np.copyto(whole, np.inf if e > 0 else 0.0, where=np.isneginf(x))  # pow(-inf, y), as C's pow
    return whole


def power(x: np.ndarray, e: object) -> Optional[np.ndarray]:
    """``x ** e`` for a float32/float64 ``x`` and a Python ``int``/``float``
    exponent that is an integer or half-integer of magnitude up to :data:`MAX_EXPONENT`;
    None for anything else (the caller takes NumPy's ``power``)."""
    if isinstance(e, bool) or not isinstance(e, (int, float)) or x.dtype not in (np.float32, np.float64):
        return None
    if not (abs(e) <= MAX_EXPONENT and (2 * e) == int(2 * e)):
        return None
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return elementwise(_power, x, e)


def general_power(x: object, y: object) -> np.ndarray:
    """NumPy's ``power`` of operands already in their result dtype; float32 operands are
    raised in float64 and rounded once (see the module doc)."""
    if np.result_type(x, y) != np.float32:
        return np.power(x, y)
    return np.power(np.asarray(x, np.float32), np.asarray(y, np.float32), dtype=np.float64).astype(np.float32)
