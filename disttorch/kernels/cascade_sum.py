"""The sum PyTorch's ``nll_loss`` (and so ``cross_entropy``) takes over a batch, term for term
and rounding for rounding.

Its CPU kernel adds the batch's terms into eight partial sums, a cascade: entry ``b`` is
added to level 0, and after entries whose index is a multiple of ``step = 2**p``
(``p = max(4, ceil(log2(batch)) // 4)``) level 0 is added into level 1 and cleared; after
multiples of ``step**2`` level 1 goes into level 2, and so on. An ignored entry
(``ignore_index``) adds nothing and carries nothing. At the end the levels are added in
order. Every addition is in the tensor's dtype (float16 and bfloat16 too), so a loss over
a batch has PyTorch's bits, where NumPy's pairwise sum rounds otherwise::

    entries:   0 | 1 ... 16 | 17 ... 32 | ... (step 16)
    level 0:   each block summed in order, then carried into level 1
    level 1:   the block sums summed in order; carried on at multiples of 256

Each level's blocks are summed with ``np.add.accumulate`` (strictly in order; ``sum``
would pair the terms up). With numba, float32 and float64 terms take PyTorch's loop itself
(:mod:`disttorch.kernels.cascade_sum_loops`): one call instead of some ten NumPy calls.
"""

from __future__ import annotations

import numpy as np

from .jit import compiled

__all__ = ["cascade_sum"]

_LEVELS = 8


def cascade_sum(terms: np.ndarray, valid: np.ndarray | None = None) -> np.generic:
    """The sum of the 1-D ``terms`` (in their dtype) where ``valid`` (default: all), in
    PyTorch's cascade order."""
    n = terms.shape[0]
    power = max(4, (n - 1).bit_length() // 4) if n > 1 else 4  # (n - 1).bit_length(): ceil(log2 n)
    loops = compiled(_load_loops) if terms.dtype in (np.float32, np.float64) else None
    if loops is not None:
        return loops.cascade_sum(terms, valid, power, np.zeros(_LEVELS, terms.dtype))[()]
    with np.errstate(over="ignore", invalid="ignore"):
        if valid is None:
            return _every_entry(terms, 1 << power)
        return _some_entries(terms, np.flatnonzero(valid), power)


def _load_loops():
    from . import cascade_sum_loops

    return cascade_sum_loops


def _every_entry(terms: np.ndarray, step: int) -> np.generic:
    """The cascade when every entry counts. Entry 0 is carried to the top level at once;
    the others fill level 0, whose every ``step`` entries (a block) carry into level 1 as
    their sum, whose every ``step`` block sums carry into level 2, and so on: each level
    keeps the sum of its unfinished block."""
    zero = np.zeros((), terms.dtype)
    level, kept = terms[1:], []
    for _ in range(_LEVELS - 1):
        if not level.size:
            break
        full = level.size // step
        kept.append(_in_order(level[full * step :], zero))
        level = np.add.accumulate(level[: full * step].reshape(full, step), axis=1)[:, -1]
    kept.append(_in_order(np.concatenate([terms[:1], level]), zero))  # the top level
    return _in_order(np.array(kept, dtype=terms.dtype), zero)


def _some_entries(terms: np.ndarray, index: np.ndarray, power: int) -> np.generic:
    """The cascade over the entries at ``index`` (the others add nothing and carry nothing)."""
    level = terms[index]
    zero = np.zeros((), terms.dtype)
    parts = []
    for j in range(1, _LEVELS):
        if level.size == 1 and index[0] == 0:  # entry 0 alone: carried to the top as it is
            break
        ends = index % (1 << (power * j)) == 0  # entries after which this level carries
        carried, rest = _block_sums(level, ends, zero)
        parts.append(rest)
        level, index = carried, index[ends]
    parts.append(_in_order(level, zero))
    return _in_order(np.array(parts, dtype=terms.dtype), zero)


def _in_order(values: np.ndarray, zero: np.ndarray) -> np.generic:
    """``((0 + v0) + v1) + ...`` in the values' dtype (the zero added last: it changes only
    a sum of -0.0 terms, to 0.0, as adding from a zero does)."""
    return np.add.accumulate(values)[-1] + zero[()] if values.size else zero[()]


def _block_sums(values: np.ndarray, ends: np.ndarray, zero: np.ndarray) -> tuple:
    """``(sums of the blocks that end at an `ends` entry, the sum of the entries after
    the last one)``, each summed in order from zero."""
    if not values.size:
        return values, zero[()]
    block = np.concatenate([[0], np.cumsum(ends[:-1])])  # the block of each entry
    starts = np.flatnonzero(np.concatenate([[True], block[1:] != block[:-1]]))
    grid = np.zeros((block[-1] + 1, int(np.diff(np.append(starts, values.size)).max())), values.dtype)
    grid[block, np.arange(values.size) - starts[block]] = values  # blocks as rows, zero-padded
    sums = np.add.accumulate(grid, axis=1)[:, -1]
    closed = int(np.count_nonzero(ends))
    return sums[:closed], (sums[closed] if closed < sums.size else zero[()])
