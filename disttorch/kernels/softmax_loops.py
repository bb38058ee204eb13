"""Compiled loop of :mod:`disttorch.kernels.softmax` (numba, the ``fast`` extra): a row's sum
in the order of PyTorch's vectorised ``reduce_all`` on an AVX-512 machine.

That sum adds the row 16 lanes at a time into one accumulator (the last, partial vector
only into its first lanes), then folds the 16 lanes in a tree: lane ``i`` plus lane
``i ^ 8``, then ``i ^ 4``, ``i ^ 2``, ``i ^ 1``. A row shorter than 16 is summed left to
right. Every float32 addition rounds on its own (``njit(contract=False)``).

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

import numpy as np

from .jit import njit

__all__ = ["row_sums"]

_LANES = 16


@njit(contract=False)
def row_sums(rows, out):  # pragma: no cover - compiled
    """``out[i]`` = the float32 sum of ``rows[i]`` in PyTorch's ``reduce_all`` order."""
    n = rows.shape[1]
    acc = np.empty(_LANES, np.float32)
    for i in range(rows.shape[0]):
        if n < _LANES:
            s = rows[i, 0]
            for j in range(1, n):
                s = np.float32(s + rows[i, j])
            out[i] = s
            continue
        for k in range(_LANES):
            acc[k] = rows[i, k]
        full = n - n % _LANES
        for d in range(_LANES, full, _LANES):
            for k in range(_LANES):
                acc[k] = np.float32(acc[k] + rows[i, d + k])
        for k in range(n - full):
            acc[k] = np.float32(acc[k] + rows[i, full + k])
        width = _LANES // 2
        while width:
            for k in range(width):  # lane k (and k ^ width: the same sum) of the tree
                acc[k] = np.float32(acc[k] + acc[k + width])
            width //= 2
        out[i] = acc[0]
