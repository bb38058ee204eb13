"""``x ** e`` for a floating array and a scalar integer or half-integer exponent, by
multiplications and one square root instead of NumPy's general ``power``, which is slow on
float32 (tens of ns an element, hundreds for negative bases). PyTorch's CPU kernel does
the same for 2, 3, -1, -2, 0.5 and -0.5: those give the same numbers as PyTorch; other
integers are computed by repeated squaring (within a few ulps of the correctly rounded
power; ``(-inf) ** 1.5`` is inf, as C's ``pow``). Large arrays split over the op's threads. Measured by ``benchmarks/kernels.py``.

Other float32 powers (tensor exponents, other scalars: :func:`general_power`) are computed
as PyTorch's kernel computes them: SLEEF's ``powf`` on the whole 32-element blocks of each
inner loop (with numba: :mod:`disttorch.kernels.vec_log_loops`, PyTorch's bits, some 4x
NumPy's float32 ``power``, as long as PyTorch's one-thread ``pow``) and the C library's
``powf`` on the elements after them (a number exponent: its double's power, rounded). Without numba all are
raised in float64 and rounded once: within an ulp of PyTorch's, equal for about 98% of the
elements (NumPy's float32 ``power``: about 80%, and six times slower).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from .jit import compiled
from .tensor_iterator import iteration, vector_block
from .threads import elementwise

__all__ = ["MAX_EXPONENT", "TORCH_EXPONENTS", "compiled_pow", "general_power", "power"]

MAX_EXPONENT = 16  # |integer part| up to which multiplications beat the general power
#: the scalar exponents PyTorch's kernel computes without ``pow`` (a copy, ones, products,
#: ``sqrt``...): other float32 ones take SLEEF's ``powf`` there, and here where numba is
TORCH_EXPONENTS = (0, 1, 2, 3, -1, -2, 0.5, -0.5)


def _integer_power(x: np.ndarray, n: int) -> np.ndarray:
    """``x ** n`` for ``n >= 1`` by repeated squaring."""
    result, base = None, x
    while True:
        if n & 1:
            result = base.copy(order="K") if result is None else np.multiply(result, base, out=result)
        n >>= 1
        if not n:
            return result
        base = base * base


def _reciprocal(power: np.ndarray, x: np.ndarray, e: float) -> np.ndarray:
    """``x ** e`` (``e < 0``) from ``power = x ** -e``: its reciprocal, or where ``power`` left
    the normal range while ``x ** e`` may not (a finite, nonzero ``x``), float64's power
    rounded (``1e103 ** -3`` is 1e-309, not ``1 / inf``)."""
    info = np.finfo(x.dtype)
    magnitude = np.abs(power)
    lost = ((magnitude < info.tiny) | (magnitude > info.max)) & np.isfinite(x) & (x != 0)
    np.reciprocal(power, out=power)
    if lost.any():
        power[lost] = np.power(x[lost].astype(np.float64), e)
    return power


def _power(x: np.ndarray, e: float) -> np.ndarray:
    if x.ndim == 0:  # (NumPy's arithmetic on 0-d arrays gives scalars, which out= cannot take)
        return _power(x.reshape(1), e).reshape(())
    n = int(e)
    if e == n:
        if n == 0:
            return np.ones_like(x)
        out = _integer_power(x, abs(n))
        if n in (-1, -2):  # PyTorch's 1 / x and 1 / (x * x)
            return np.reciprocal(out, out=out)
        return _reciprocal(out, x, e) if n < 0 else out
    root = np.sqrt(x)  # a half-integer: x ** (n + 0.5) = x ** n * sqrt(x)
    if not n:  # sqrt and rsqrt, as PyTorch: sqrt(-0.0) = -0.0, sqrt(-inf) = nan
        return np.reciprocal(root, out=root) if e < 0 else root
    whole = _integer_power(x, abs(n))
    whole *= root
    np.abs(whole, out=whole)  # pow(-0.0, y) is +0.0 (+inf for y < 0); other negatives are NaN
    if e < 0:
        whole = _reciprocal(whole, x, e)
    np.copyto(whole, np.inf if e > 0 else 0.0, where=np.isneginf(x))  # pow(-inf, y), as C's pow
    return whole


def power(x: np.ndarray, e: object) -> Optional[np.ndarray]:
    """``x ** e`` for a float32/float64 ``x`` and a Python ``int``/``float``
    exponent that is an integer or half-integer of magnitude up to :data:`MAX_EXPONENT`
    (float32 with numba: one of :data:`TORCH_EXPONENTS`); None for anything else (the caller
    takes :func:`general_power`)."""
    if isinstance(e, bool) or not isinstance(e, (int, float)) or x.dtype not in (np.float32, np.float64):
        return None
    if not (abs(e) <= MAX_EXPONENT and (2 * e) == int(2 * e)):
        return None
    if x.dtype == np.float32 and e not in TORCH_EXPONENTS and compiled_pow():
        return None  # PyTorch's powf, SLEEF's steps (general_power)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return elementwise(_power, x, e)


def _load_loops():
    from . import vec_log_loops

    return vec_log_loops


def compiled_pow() -> bool:
    """Whether float32 powers take SLEEF's ``powf`` steps (numba's compiled loops)."""
    return compiled(_load_loops) is not None


def _float64_power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.power(x, y, dtype=np.float64).astype(np.float32)


def _vectorised_power(
    loops: object, x: np.ndarray, y: np.ndarray, number: float | None, laid_out: bool = False
) -> np.ndarray:
    """``x ** y`` (float32) as PyTorch's kernel: SLEEF's ``powf`` on whole 32-element blocks
    (16 with PyTorch's AVX2 kernels: :func:`.tensor_iterator.vector_block`) of each
    vectorised inner loop, in the order PyTorch walks the operands, float64's power
    rounded once on the rest (there a ``number`` exponent unrounded: PyTorch's scalar loop
    raises to the double). ``laid_out``: PyTorch lays the result out (C order) first, as
    ``number ** tensor`` does."""
    shape = np.broadcast_shapes(x.shape, y.shape)
    out = np.empty(shape, np.float32)
    if not out.size:
        return out
    order, run, vectorised = iteration(shape, *((out, x, y) if laid_out else (x, y)))
    if not laid_out:  # the result laid out in the order the operands are walked, as PyTorch's
        out = np.empty([shape[d] for d in order], np.float32).transpose(np.argsort(order))
    xs, ys = np.broadcast_to(x, shape).transpose(order), np.broadcast_to(y, shape).transpose(order)
    rows = np.empty(xs.shape, np.float32).reshape(-1, run)
    xr, yr = np.ascontiguousarray(xs).reshape(-1, run), np.ascontiguousarray(ys).reshape(-1, run)
    cut = run - run % vector_block() if vectorised else 0
    if cut:
        block = np.empty((rows.shape[0], cut), np.float32)
        loops.pow(
            np.ascontiguousarray(xr[:, :cut]).reshape(-1),
            np.ascontiguousarray(yr[:, :cut]).reshape(-1),
            block.reshape(-1),
        )
        rows[:, :cut] = block
    if cut < run and number is not None:  # std::pow(float, double): the double's power, rounded
        rows[:, cut:] = _float64_power(xr[:, cut:], np.float64(number))
    elif cut < run:  # std::pow(float, float): the C library's powf
        tail = np.empty((rows.shape[0], run - cut), np.float32)
        loops.c_pow(
            np.ascontiguousarray(xr[:, cut:]).reshape(-1),
            np.ascontiguousarray(yr[:, cut:]).reshape(-1),
            tail.reshape(-1),
        )
        rows[:, cut:] = tail
    out.transpose(order)[...] = rows.reshape(xs.shape)
    return out


def general_power(x: object, y: object) -> np.ndarray:
    """NumPy's ``power`` of operands already in their result dtype; float32 operands as
    PyTorch's kernel computes them (see the module doc)."""
    if np.result_type(x, y) != np.float32:
        return np.power(x, y)
    xa, ya = np.asarray(x, np.float32), np.asarray(y, np.float32)
    loops = compiled(_load_loops)
    if loops is None:
        return _float64_power(xa, ya)
    number = y if isinstance(y, (int, float)) else None
    return _vectorised_power(loops, xa, ya, number, laid_out=not isinstance(x, np.ndarray))
