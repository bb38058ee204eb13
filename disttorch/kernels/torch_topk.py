"""The order in which PyTorch's CPU ``topk`` and unstable ``sort`` return equal elements.

PyTorch's CPU kernel copies a slice into (value, index) pairs and, with the C++ library's
unstable algorithms, either ``partial_sort``s the first ``k`` (when ``64 * k <= n``) or
``nth_element``s the ``k``-th into place and then ``sort``s the ``k - 1`` before it (only
when ``sorted``). With distinct values that is the sorted order, but equal values (and,
unsorted, all values) come out in the order those algorithms leave them: a slice of zeros
``topk(5)`` of 100 gives indices 65, 68, 67, 66, 69. ``sort`` (``stable=False``, the
default) is the C++ library's ``sort`` of the whole slice: stable up to 16 elements (an
insertion sort), not beyond.

This module replays the GNU C++ library's algorithms (introselect, introsort, heap select)
step by step on one slice, so that ties come out as PyTorch's do. The comparison sees only
an integer key per element (the element's rank among the slice's distinct values, NaN the
largest; negated for the smallest ``k``), which is all the algorithms ever look at. One
Python step per comparison: :func:`topk_order` and :func:`sort_order` are meant for the
slices where ties decide.
"""

from __future__ import annotations

from typing import List

import numpy as np

__all__ = ["SORT_THRESHOLD", "sort_order", "topk_order"]

SORT_THRESHOLD = 16  # introsort leaves runs this short to the final insertion sort


def _lg(n: int) -> int:
    return n.bit_length() - 1


class _Slice:
    """One slice as the C++ algorithms see it: ``keys[i]`` and ``index[i]`` move together;
    ``before(a, b)`` is the kernel's comparison (a sorts before b: a larger key)."""

    def __init__(self, keys: List[int]):
        self.keys = keys
        self.index = list(range(len(keys)))

    def before(self, a: int, b: int) -> bool:
        return self.keys[a] > self.keys[b]

    def swap(self, a: int, b: int) -> None:
        k, i = self.keys, self.index
        k[a], k[b] = k[b], k[a]
        i[a], i[b] = i[b], i[a]

    # -------------------------------------------------------------- heap
    def _push_heap(self, first: int, hole: int, top: int, value: tuple) -> None:
        k, i = self.keys, self.index
        parent = (hole - 1) // 2
        while hole > top and k[first + parent] > value[0]:
            k[first + hole], i[first + hole] = k[first + parent], i[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        k[first + hole], i[first + hole] = value

    def _adjust_heap(self, first: int, hole: int, length: int, value: tuple) -> None:
        k, i = self.keys, self.index
        top, child = hole, hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if self.before(first + child, first + child - 1):
                child -= 1
            k[first + hole], i[first + hole] = k[first + child], i[first + child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            k[first + hole], i[first + hole] = k[first + child - 1], i[first + child - 1]
            hole = child - 1
        self._push_heap(first, hole, top, value)

    def _make_heap(self, first: int, last: int) -> None:
        length = last - first
        if length < 2:
            return
        for parent in range((length - 2) // 2, -1, -1):
            value = (self.keys[first + parent], self.index[first + parent])
            self._adjust_heap(first, parent, length, value)

    def _pop_heap(self, first: int, last: int, result: int) -> None:
        k, i = self.keys, self.index
        value = (k[result], i[result])
        k[result], i[result] = k[first], i[first]
        self._adjust_heap(first, 0, last - first, value)

    def heap_select(self, first: int, middle: int, last: int) -> None:
        self._make_heap(first, middle)
        for j in range(middle, last):
            if self.before(j, first):
                self._pop_heap(first, middle, j)

    def partial_sort(self, first: int, middle: int, last: int) -> None:
        self.heap_select(first, middle, last)
        while middle - first > 1:  # sort_heap
            middle -= 1
            self._pop_heap(first, middle, middle)

    # -------------------------------------------------------------- partition
    def _median_to_first(self, result: int, a: int, b: int, c: int) -> None:
        if self.before(a, b):
            if self.before(b, c):
                self.swap(result, b)
            elif self.before(a, c):
                self.swap(result, c)
            else:
                self.swap(result, a)
        elif self.before(a, c):
            self.swap(result, a)
        elif self.before(b, c):
            self.swap(result, c)
        else:
            self.swap(result, b)

    def _partition_pivot(self, first: int, last: int) -> int:
        self._median_to_first(first, first + 1, first + (last - first) // 2, last - 1)
        lo, hi, pivot = first + 1, last, first
        while True:
            while self.before(lo, pivot):
                lo += 1
            hi -= 1
            while self.before(pivot, hi):
                hi -= 1
            if not lo < hi:
                return lo
            self.swap(lo, hi)
            lo += 1

    # -------------------------------------------------------------- insertion
    def _linear_insert(self, last: int) -> None:
        k, i = self.keys, self.index
        value = (k[last], i[last])
        nxt = last - 1
        while value[0] > k[nxt]:
            k[last], i[last] = k[nxt], i[nxt]
            last, nxt = nxt, nxt - 1
        k[last], i[last] = value

    def _insertion_sort(self, first: int, last: int) -> None:
        k, i = self.keys, self.index
        for j in range(first + 1, last):
            if self.before(j, first):
                value = (k[j], i[j])
                k[first + 1 : j + 1], i[first + 1 : j + 1] = k[first:j], i[first:j]
                k[first], i[first] = value
            else:
                self._linear_insert(j)

    # -------------------------------------------------------------- the three algorithms
    def nth_element(self, first: int, nth: int, last: int) -> None:
        if first == last or nth == last:
            return
        depth = 2 * _lg(last - first)
        while last - first > 3:
            if depth == 0:
                self.heap_select(first, nth + 1, last)
                self.swap(first, nth)
                return
            depth -= 1
            cut = self._partition_pivot(first, last)
            if cut <= nth:
                first = cut
            else:
                last = cut
        self._insertion_sort(first, last)

    def _introsort_loop(self, first: int, last: int, depth: int) -> None:
        while last - first > SORT_THRESHOLD:
            if depth == 0:
                self.partial_sort(first, last, last)
                return
            depth -= 1
            cut = self._partition_pivot(first, last)
            self._introsort_loop(cut, last, depth)
            last = cut

    def sort(self, first: int, last: int) -> None:
        if first == last:
            return
        self._introsort_loop(first, last, 2 * _lg(last - first))
        if last - first > SORT_THRESHOLD:
            self._insertion_sort(first, first + SORT_THRESHOLD)
            for j in range(first + SORT_THRESHOLD, last):
                self._linear_insert(j)
        else:
            self._insertion_sort(first, last)


def _keys(row: np.ndarray, largest: bool) -> List[int]:
    """Each element's rank among the row's distinct values (NaNs share the largest rank),
    negated when the smallest come first: the comparison is then ``key(a) > key(b)``."""
    nan = np.isnan(row) if row.dtype.kind in "fc" else np.zeros(row.shape, dtype=bool)
    _, ranks = np.unique(row[~nan], return_inverse=True)
    keys = np.empty(row.shape, dtype=np.int64)
    keys[~nan] = ranks
    keys[nan] = len(row)
    return (keys if largest else -keys).tolist()


def topk_order(row: np.ndarray, k: int, largest: bool, sorted: bool) -> np.ndarray:
    """The indices PyTorch's CPU ``topk`` gives for one 1-D slice ``row``, in its order."""
    n = row.shape[0]
    s = _Slice(_keys(row, largest))
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    if 64 * k <= n:
        s.partial_sort(0, k, n)
    else:
        s.nth_element(0, k - 1, n)
        if sorted:
            s.sort(0, k - 1)
    return np.asarray(s.index[:k], dtype=np.int64)


def sort_order(row: np.ndarray, descending: bool) -> np.ndarray:
    """The indices PyTorch's CPU ``sort(stable=False)`` gives for one 1-D slice ``row``."""
    s = _Slice(_keys(row, descending))
    s.sort(0, row.shape[0])
    return np.asarray(s.index, dtype=np.int64)
