"""PyTorch's cascade sum of a batch's loss terms as its kernel runs it, one loop (numba, the
``fast`` extra): the same additions in the same order as the NumPy form in
:mod:`disttorch.kernels.cascade_sum`, which takes some ten NumPy calls, tens of
microseconds, for a batch of a hundred entries (a large part of a small model's loss).

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

import numpy as np

from .jit import njit

__all__ = ["cascade_sum"]


@njit(contract=False)
def cascade_sum(terms, valid, power, levels):  # pragma: no cover - compiled
    """The sum of the float32/float64 ``terms`` where ``valid`` (``None``: all) in PyTorch's
    cascade order, with partial sums in ``levels`` (zeros of the terms' dtype, one per
    level): after entry ``b``, each level ``j`` whose ``b``'s bits ``j * power`` to
    ``(j + 1) * power`` are all zero is added into the next and cleared."""
    mask = (1 << power) - 1
    for b in range(terms.shape[0]):
        if valid is not None and not valid[b]:
            continue
        levels[0] += terms[b]
        for j in range(levels.shape[0] - 1):
            if b & (mask << (j * power)):
                break
            levels[j + 1] += levels[j]
            levels[j] = 0
    total = levels[0]
    for j in range(1, levels.shape[0]):
        total += levels[j]
    return np.asarray(total)  # (a 0-d array: the caller takes its NumPy scalar)
