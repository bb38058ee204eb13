"""The order in which PyTorch's CPU ``topk``, unstable ``sort`` and ``mode`` leave equal
elements.

PyTorch's CPU kernel copies a slice into (value, index) pairs and, with the C++ library's
unstable algorithms, either ``partial_sort``s the first ``k`` (when ``64 * k <= n``) or
``nth_element``s the ``k``-th into place and then ``sort``s the ``k - 1`` before it (only
when ``sorted``). With distinct values that is the sorted order, but equal values (and,
unsorted, all values) come out in the order those algorithms leave them: a slice of zeros
``topk(5)`` of 100 gives indices 65, 68, 67, 66, 69. ``sort`` (``stable=False``, the
default) is the C++ library's ``sort`` of the whole slice: stable up to 16 elements (an
insertion sort), not beyond. ``mode`` sorts its slice the same way, but with the plain
``<`` comparison, under which a NaN is neither before nor after anything.

This module replays the GNU C++ library's algorithms (introselect, introsort, heap select)
step by step on one slice, so that ties come out as PyTorch's do. The comparison sees only
a key per element (the element's rank among the slice's distinct values, NaN the largest or,
for ``mode``, NaN itself; negated for the smallest first), which is all the algorithms ever
look at. The algorithms are written once, as functions of ``k`` (the keys; ``a`` goes before
``b`` when ``k[a] > k[b]``) and ``i`` (the indices, moved with them): run as Python over
lists (one step per comparison, quick enough for short slices) and, with numba (the
``fast`` extra), compiled over arrays for slices longer than ``PYTHON_MAX``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .jit import compiled, njit

__all__ = ["SORT_THRESHOLD", "mode_order", "replays", "sort_order", "topk_order"]

SORT_THRESHOLD = 16  # introsort leaves runs this short to the final insertion sort
#: the longest slice replayed in Python (about 10 ms for this many elements); longer ones
#: are replayed by the compiled form when there is one
PYTHON_MAX = 8192


def _lg(n):
    """The floor of ``log2(n)``."""
    r = -1
    while n > 0:
        n >>= 1
        r += 1
    return r


def _swap(k, i, a, b):
    """Exchange elements ``a`` and ``b`` (key and index)."""
    k[a], k[b] = k[b], k[a]
    i[a], i[b] = i[b], i[a]


def _push_heap(k, i, first, hole, top, vk, vi):
    """``std::__push_heap``: move the value ``(vk, vi)`` up from ``hole``."""
    parent = (hole - 1) // 2
    while hole > top and k[first + parent] > vk:
        k[first + hole], i[first + hole] = k[first + parent], i[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    k[first + hole], i[first + hole] = vk, vi


def _adjust_heap(k, i, first, hole, length, vk, vi):
    """``std::__adjust_heap``: sift the hole at ``hole`` down, then push ``(vk, vi)``."""
    top, child = hole, hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if k[first + child] > k[first + child - 1]:
            child -= 1
        k[first + hole], i[first + hole] = k[first + child], i[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        k[first + hole], i[first + hole] = k[first + child - 1], i[first + child - 1]
        hole = child - 1
    _push_heap(k, i, first, hole, top, vk, vi)


def _pop_heap(k, i, first, last, result):
    """``std::__pop_heap``: the heap's top goes to ``result``, whose element enters the heap."""
    vk, vi = k[result], i[result]
    k[result], i[result] = k[first], i[first]
    _adjust_heap(k, i, first, 0, last - first, vk, vi)


def _heap_select(k, i, first, middle, last):
    """``std::__heap_select``: the heap ``[first, middle)`` keeps the best of ``[first, last)``."""
    length = middle - first
    if length >= 2:  # make_heap
        for parent in range((length - 2) // 2, -1, -1):
            _adjust_heap(k, i, first, parent, length, k[first + parent], i[first + parent])
    for j in range(middle, last):
        if k[j] > k[first]:
            _pop_heap(k, i, first, middle, j)


def _partial_sort(k, i, first, middle, last):
    """``std::partial_sort``: ``[first, middle)`` the best of ``[first, last)``, in order."""
    _heap_select(k, i, first, middle, last)
    while middle - first > 1:  # sort_heap
        middle -= 1
        _pop_heap(k, i, first, middle, middle)


def _median_to_first(k, i, result, a, b, c):
    """``std::__move_median_to_first``: the median of ``a``, ``b``, ``c`` to ``result``."""
    if k[a] > k[b]:
        if k[b] > k[c]:
            _swap(k, i, result, b)
        elif k[a] > k[c]:
            _swap(k, i, result, c)
        else:
            _swap(k, i, result, a)
    elif k[a] > k[c]:
        _swap(k, i, result, a)
    elif k[b] > k[c]:
        _swap(k, i, result, c)
    else:
        _swap(k, i, result, b)


def _partition_pivot(k, i, first, last):
    """``std::__unguarded_partition_pivot``: the cut of ``[first, last)`` around a median pivot."""
    _median_to_first(k, i, first, first + 1, first + (last - first) // 2, last - 1)
    lo, hi = first + 1, last
    while True:
        while k[lo] > k[first]:
            lo += 1
        hi -= 1
        while k[first] > k[hi]:
            hi -= 1
        if not lo < hi:
            return lo
        _swap(k, i, lo, hi)
        lo += 1


def _linear_insert(k, i, last):
    """``std::__unguarded_linear_insert``: the element at ``last`` moved back into place."""
    vk, vi = k[last], i[last]
    while vk > k[last - 1]:
        k[last], i[last] = k[last - 1], i[last - 1]
        last -= 1
    k[last], i[last] = vk, vi


def _insertion_sort(k, i, first, last):
    """``std::__insertion_sort`` of ``[first, last)``."""
    for j in range(first + 1, last):
        if k[j] > k[first]:
            vk, vi = k[j], i[j]
            for m in range(j, first, -1):
                k[m], i[m] = k[m - 1], i[m - 1]
            k[first], i[first] = vk, vi
        else:
            _linear_insert(k, i, j)


def _nth_element(k, i, first, nth, last):
    """``std::nth_element``: introselect, position ``nth`` gets its sorted element."""
    if first == last or nth == last:
        return
    depth = 2 * _lg(last - first)
    while last - first > 3:
        if depth == 0:
            _heap_select(k, i, first, nth + 1, last)
            _swap(k, i, first, nth)
            return
        depth -= 1
        cut = _partition_pivot(k, i, first, last)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(k, i, first, last)


def _sort(k, i, first, last):
    """``std::sort``: introsort of ``[first, last)``, then the final insertion sort."""
    if first == last:
        return
    # introsort's loop; its recursion into the upper part as a stack of ranges (the
    # parts are disjoint, so the order in which they are done does not matter)
    stack = [(first, last, 2 * _lg(last - first))]
    while len(stack) > 0:
        lo, hi, depth = stack.pop()
        while hi - lo > SORT_THRESHOLD:
            if depth == 0:
                _partial_sort(k, i, lo, hi, hi)
                break
            depth -= 1
            cut = _partition_pivot(k, i, lo, hi)
            stack.append((cut, hi, depth))
            hi = cut
    if last - first > SORT_THRESHOLD:
        _insertion_sort(k, i, first, first + SORT_THRESHOLD)
        for j in range(first + SORT_THRESHOLD, last):
            _linear_insert(k, i, j)
    else:
        _insertion_sort(k, i, first, last)


class _Algorithms(NamedTuple):
    sort: Callable
    partial_sort: Callable
    nth_element: Callable


_HELPERS = (_lg, _swap, _push_heap, _adjust_heap, _pop_heap, _heap_select, _partial_sort)
_HELPERS += (_median_to_first, _partition_pivot, _linear_insert, _insertion_sort)
#: the algorithms over Python lists
_PYTHON = _Algorithms(_sort, _partial_sort, _nth_element)


def _compile() -> _Algorithms:
    """The algorithms compiled by numba, over arrays; the helpers they call are compiled
    into them (``register_jitable`` leaves the Python functions as they are)."""
    from numba.extending import register_jitable

    for helper in _HELPERS:
        register_jitable(helper)
    jit = njit()
    return _Algorithms(jit(_sort), jit(_partial_sort), jit(_nth_element))


def replays(n: int) -> bool:
    """Whether a slice of ``n`` elements is replayed: always with the compiled form, up to
    ``PYTHON_MAX`` elements without it (the callers leave longer slices in stable order)."""
    return n <= PYTHON_MAX or compiled(_compile) is not None


def _slice(row: np.ndarray, largest: bool, nan_unordered: bool = False) -> tuple:
    """``(algorithms, keys, indices)`` for one 1-D slice: each element's rank among the
    row's distinct values (NaNs share the largest rank, or are NaN when ``nan_unordered``),
    negated when the smallest come first (the comparison is then ``key(a) > key(b)``); the
    compiled form with arrays for long slices, the Python form with lists otherwise."""
    nan = np.isnan(row) if row.dtype.kind in "fcV" else np.zeros(row.shape, dtype=bool)  # (V: bfloat16)
    _, ranks = np.unique(row[~nan], return_inverse=True)
    keys = np.empty(row.shape, dtype=np.float64)
    keys[~nan] = ranks.reshape(-1) if largest else -ranks.reshape(-1)
    keys[nan] = np.nan if nan_unordered else (len(row) if largest else -len(row))
    index = np.arange(len(row), dtype=np.int64)
    fast = compiled(_compile) if len(row) > PYTHON_MAX else None
    if fast is not None:
        return fast, keys, index
    return _PYTHON, keys.tolist(), index.tolist()


def topk_order(row: np.ndarray, k: int, largest: bool, sorted: bool) -> np.ndarray:
    """The indices PyTorch's CPU ``topk`` gives for one 1-D slice ``row``, in its order."""
    n = row.shape[0]
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    algorithms, keys, index = _slice(row, largest)
    if 64 * k <= n:
        algorithms.partial_sort(keys, index, 0, k, n)
    else:
        algorithms.nth_element(keys, index, 0, k - 1, n)
        if sorted:
            algorithms.sort(keys, index, 0, k - 1)
    return np.asarray(index[:k], dtype=np.int64)


def sort_order(row: np.ndarray, descending: bool) -> np.ndarray:
    """The indices PyTorch's CPU ``sort(stable=False)`` gives for one 1-D slice ``row``."""
    algorithms, keys, index = _slice(row, descending)
    algorithms.sort(keys, index, 0, row.shape[0])
    return np.asarray(index, dtype=np.int64)


def mode_order(row: np.ndarray) -> np.ndarray:
    """The order in which PyTorch's CPU ``mode`` sorts one 1-D slice ``row``: ascending,
    with the plain ``<`` comparison (a NaN is neither before nor after anything)."""
    algorithms, keys, index = _slice(row, False, nan_unordered=True)
    algorithms.sort(keys, index, 0, row.shape[0])
    return np.asarray(index, dtype=np.int64)
