"""Which of several equal values PyTorch's CPU ``kthvalue`` returns.

PyTorch's kernel selects the ``k``-th smallest element of a slice with a quickselect in the
style of Sedgewick's quicksort (1978): the pivot is the median of the first, middle and last
elements of the active range, a Hoare partition scans from both ends towards it, and the
search continues in the part that holds position ``k - 1``. Elements move in pairs with
their indices, and the algorithm is not stable, so when the ``k``-th value occurs more than
once the index returned is whichever of them the partitions leave at position ``k - 1``.

:func:`kthvalue_index` replays those steps on one slice. It compares integer keys (each
element's rank among the slice's distinct values, NaN the largest, as the kernel's
``greater or NaN`` comparison orders them), one Python step per comparison: it is meant for
the slices where ties decide.
"""

from __future__ import annotations

import numpy as np

__all__ = ["kthvalue_index"]


def _keys(row: np.ndarray) -> list:
    """Each element's rank among the row's distinct values; NaNs share the largest."""
    if row.dtype.kind not in "fcV":  # (V: bfloat16)
        return np.unique(row, return_inverse=True)[1].reshape(-1).tolist()
    nan = np.isnan(row)
    ranks = np.zeros(row.shape, dtype=np.int64)
    ranks[~nan] = np.unique(row[~nan], return_inverse=True)[1].reshape(-1)
    ranks[nan] = ranks.max(initial=-1) + 1
    return ranks.tolist()


def kthvalue_index(row: np.ndarray, k: int) -> int:
    """The index PyTorch's CPU ``kthvalue(row, k)`` returns for the 1-D ``row``."""
    keys, index = _keys(row), list(range(row.shape[0]))

    def swap(a: int, b: int) -> None:
        keys[a], keys[b] = keys[b], keys[a]
        index[a], index[b] = index[b], index[a]

    target, left, right = k - 1, 0, len(keys) - 1
    while right > left:
        if right == left + 1:  # two elements: put them in order
            if keys[left] > keys[right]:
                swap(left, right)
            break
        swap((left + right) >> 1, left + 1)  # the median of three goes to ``left``
        if keys[left + 1] > keys[right]:
            swap(left + 1, right)
        if keys[left] > keys[right]:
            swap(left, right)
        if keys[left + 1] > keys[left]:
            swap(left + 1, left)
        i, j, pivot = left + 1, right, keys[left]
        while True:  # Hoare's partition around the pivot
            i += 1
            while pivot > keys[i]:
                i += 1
            j -= 1
            while keys[j] > pivot:
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(left, j)
        if j <= target:
            left = i
        if j >= target:
            right = j - 1
    return index[target]
