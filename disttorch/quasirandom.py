"""``torch.quasirandom``: ``SobolEngine``, (scrambled) Sobol low-discrepancy sequences.

The direction numbers are Joe and Kuo's ``new-joe-kuo-6.21201`` table (search criterion D(6),
up to 21201 dimensions), shipped as ``disttorch/_data/sobol_direction_numbers.npz`` under
its BSD-style licence (``disttorch/_data/SOBOL_LICENSE.txt``).

Points are produced in Gray-code order exactly as PyTorch produces them, so the unscrambled
sequence is bit-identical to PyTorch's. Step ``c`` XORs in the direction number of ``c``'s
lowest zero bit, so ``draw`` gathers those numbers for a whole run of points and takes one
cumulative XOR; ``fast_forward`` jumps directly, point ``k`` being ``shift XOR`` the
direction numbers of the set bits of ``gray(k) = k ^ (k >> 1)``.

Scrambling is PyTorch's: a random lower-triangular binary matrix per dimension applied to
the direction numbers (linear matrix scrambling) and a random digital shift, their bits
drawn as PyTorch draws them: ``randint(2, ...)`` from a new ``Generator`` seeded with
``seed``, or from the default generator when ``seed`` is None, so scrambled sequences equal
PyTorch's (after the same ``manual_seed`` when unseeded).
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import numpy as np

from . import _dtype
from ._random import Generator, randint
from ._tensor import Tensor

__all__ = ["SobolEngine"]

_MAXBIT = 30
_MAXDIM = 21201
_RECIPD = 2.0**-_MAXBIT
_CHUNK = 2048  # dimensions scrambled per block (bounds the (d, 30, 30) work arrays)


@functools.lru_cache(maxsize=1)
def _table() -> tuple[np.ndarray, np.ndarray]:
    """Joe and Kuo's primitive polynomials (one per dimension) and initial direction
    numbers ``m_1..m_18`` (zero past each polynomial's degree), both int64."""
    path = resources.files("disttorch") / "_data" / "sobol_direction_numbers.npz"
    with resources.as_file(path) as p, np.load(p) as z:
        m = np.concatenate([z["m_lo"], z["m_mid"], z["m_hi"]]).T.astype(np.int64)
        return z["poly"].astype(np.int64), m


def _direction_numbers(dimension: int) -> np.ndarray:
    """The ``(dimension, 30)`` int64 direction numbers ``v[d, j] = m_j * 2**(29 - j)``, the
    ``m_j`` past the initial ones following each dimension's polynomial recurrence."""
    poly, m0 = _table()
    p, m0 = poly[:dimension], m0[:dimension]
    deg = np.array([int(x).bit_length() - 1 for x in p], dtype=np.int64)
    rows = np.arange(dimension)
    m = np.zeros((dimension, _MAXBIT), dtype=np.int64)
    m[:, : m0.shape[1]] = np.where(np.arange(m0.shape[1]) < deg[:, None], m0, 0)
    m[0] = 1  # the first dimension is van der Corput's sequence
    for j in range(_MAXBIT):
        grow = j >= deg
        if not grow.any():
            continue
        new = m[rows, np.maximum(j - deg, 0)]
        for k in range(int(deg[grow].max())):
            uses = grow & (k < deg) & (((p >> np.maximum(deg - 1 - k, 0)) & 1) == 1)
            new = new ^ np.where(uses, m[rows, max(j - k - 1, 0)] << (k + 1), 0)
        m[:, j] = np.where(grow, new, m[:, j])
    return m << (_MAXBIT - 1 - np.arange(_MAXBIT))


def _random_bits(count: int, seed: int | None) -> np.ndarray:
    """``count`` random bits drawn by ``randint(2, ...)`` from a new generator seeded with
    ``seed``, or from the default generator when ``seed`` is None."""
    generator = None if seed is None else Generator().manual_seed(seed)
    return randint(2, (count,), generator=generator)._data


def _scrambled(v: np.ndarray, ltm: np.ndarray) -> np.ndarray:
    """Each direction number's 30 bits (most significant first) multiplied over GF(2) by its
    dimension's lower-triangular matrix ``ltm`` (diagonal forced to one)."""
    ltm = ltm.copy()
    ltm[:, np.arange(_MAXBIT), np.arange(_MAXBIT)] = 1
    msb_first = _MAXBIT - 1 - np.arange(_MAXBIT)
    out = np.empty_like(v)
    for lo in range(0, v.shape[0], _CHUNK):
        blk = slice(lo, lo + _CHUNK)
        bits = ((v[blk, :, None] >> msb_first) & 1).astype(np.float32)  # (d, j, c)
        prod = np.matmul(bits, ltm[blk].transpose(0, 2, 1).astype(np.float32))  # (d, j, p), exact
        out[blk] = ((prod.astype(np.int64) & 1) << msb_first).sum(-1)
    return out


class SobolEngine:
    r"""An engine for (scrambled) Sobol sequences, low-discrepancy quasi-random points in
    :math:`[0, 1)^{dimension}`, with Joe and Kuo's direction numbers (up to 21201 dimensions).

    Args:
        dimension (int): the dimensionality of the points.
        scramble (bool, optional): scramble the sequence (random linear matrix scrambling
            and a digital shift). Default: ``False``.
        seed (int, optional): seed of the scrambling; with it, the scrambled sequence equals
            PyTorch's for the same seed. ``None`` draws from the default generator.

    Example::

        >>> torch.quasirandom.SobolEngine(dimension=5).draw(3)
        tensor([[0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
                [0.5000, 0.5000, 0.5000, 0.5000, 0.5000],
                [0.7500, 0.2500, 0.2500, 0.2500, 0.7500]])
    """

    MAXBIT = _MAXBIT
    MAXDIM = _MAXDIM

    def __init__(self, dimension: int, scramble: bool = False, seed: int | None = None) -> None:
        if not isinstance(dimension, (int, np.integer)) or isinstance(dimension, bool):
            raise TypeError(f"SobolEngine(): dimension must be an int, got {type(dimension).__name__}")
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(f"Supported range of dimensionality for SobolEngine is [1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = int(dimension)
        state = _direction_numbers(self.dimension)
        if scramble:
            bits = _random_bits(self.dimension * _MAXBIT * (1 + _MAXBIT), seed)
            shift_bits, ltm = np.split(bits, [self.dimension * _MAXBIT])
            shift = shift_bits.reshape(self.dimension, _MAXBIT) @ (1 << np.arange(_MAXBIT, dtype=np.int64))
            state = _scrambled(state, np.tril(ltm.reshape(self.dimension, _MAXBIT, _MAXBIT)))
        else:
            shift = np.zeros(self.dimension, dtype=np.int64)
        self.sobolstate = Tensor._make(state)
        self.shift = Tensor._make(shift)
        self.quasi = Tensor._make(shift.copy())
        # PyTorch divides in the default dtype of construction time and later casts, so a
        # float64 draw's first point carries that precision; kept for identical values.
        first = (shift.astype(_dtype.get_default_dtype().numpy) * _RECIPD).reshape(1, -1)
        self._first_point = Tensor._make(first.astype(_dtype.get_default_dtype().numpy, copy=False))
        self.num_generated = 0

    def _points(self, n: int) -> np.ndarray:
        """The next ``n`` points after the one ``quasi`` holds, as int64 (and advance)."""
        start = self.num_generated - 1 if self.num_generated else 0
        if start + n >= 1 << _MAXBIT:
            raise ValueError(
                f"SobolEngine: a Sobol sequence of {_MAXBIT}-bit direction numbers has 2**{_MAXBIT} "
                f"points; {self.num_generated} drawn, {n} more requested"
            )
        if n == 0:
            return np.empty((0, self.dimension), dtype=np.int64)
        # step c flips the direction number of c's lowest zero bit (c + 1's lowest set bit)
        c1 = np.arange(start + 1, start + n + 1, dtype=np.int64)
        bit = np.log2(c1 & -c1).astype(np.int64)  # exact: c1 & -c1 is a power of two
        pts = self.sobolstate._data.T[bit]
        np.bitwise_xor.accumulate(pts, axis=0, out=pts)
        pts ^= self.quasi._data
        self.quasi = Tensor._make(pts[-1].copy())
        return pts

    def draw(self, n: int = 1, out: Tensor | None = None, dtype: Any = None) -> Tensor:
        """Draw the next ``n`` points, an ``(n, dimension)`` tensor (default dtype unless
        ``dtype`` is given); written into ``out`` (resized) when given."""
        n = int(n)
        if n < 0:
            raise ValueError(f"SobolEngine.draw(): n must be non-negative, got {n}")
        dt = _dtype.to_numpy(dtype) if dtype is not None else _dtype.get_default_dtype().numpy
        if dt not in (np.float32, np.float64):
            raise RuntimeError(f"\"_sobol_engine_draw\" not implemented for '{_dtype.scalar_type_name(dt)}'")
        if self.num_generated == 0:
            first = self._first_point._data.astype(dt)
            rest = self._points(n - 1) if n > 1 else np.empty((0, self.dimension), np.int64)
            result = np.concatenate([first, rest.astype(dt) * dt.type(_RECIPD)])[:n]
        else:
            result = self._points(n).astype(dt) * dt.type(_RECIPD)
        self.num_generated += n
        res = Tensor._make(result)
        if out is not None:
            out.resize_as_(res).copy_(res)
            return out
        return res

    def draw_base2(self, m: int, out: Tensor | None = None, dtype: Any = None) -> Tensor:
        """Draw the next ``2**m`` points; the total drawn must stay a power of two (which
        keeps the sequence's balance properties)."""
        n = 2**m
        total_n = self.num_generated + n
        if total_n & (total_n - 1) != 0:
            raise ValueError(
                "The balance properties of Sobol' points require n to be a power of 2. "
                f"{self.num_generated} points have been previously generated, then: "
                f"n={self.num_generated}+2**{m}={total_n}. If you still want to do this, please use "
                "'SobolEngine.draw()' instead."
            )
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self) -> "SobolEngine":
        """Return to the first point of the sequence."""
        self.quasi = Tensor._make(self.shift._data.copy())
        self.num_generated = 0
        return self

    def fast_forward(self, n: int) -> "SobolEngine":
        """Skip the next ``n`` points (as drawing them would, without computing them)."""
        n = int(n)
        if n < 0:
            raise ValueError(f"SobolEngine.fast_forward(): n must be non-negative, got {n}")
        start = self.num_generated - 1 if self.num_generated else 0
        steps = n - 1 if self.num_generated == 0 else n
        if steps > 0:
            end = start + steps
            if end >= 1 << _MAXBIT:
                raise ValueError(
                    f"SobolEngine: a Sobol sequence has 2**{_MAXBIT} points; cannot skip past it"
                )
            flips = (end ^ (end >> 1)) ^ (start ^ (start >> 1))
            q = self.quasi._data.copy()
            for b in range(flips.bit_length()):
                if (flips >> b) & 1:
                    q ^= self.sobolstate._data[:, b]
            self.quasi = Tensor._make(q)
        self.num_generated += n
        return self

    def __repr__(self) -> str:
        fmt = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt.append("scramble=True")
        if self.seed is not None:
            fmt.append(f"seed={self.seed}")
        return f"{type(self).__name__}({', '.join(fmt)})"
