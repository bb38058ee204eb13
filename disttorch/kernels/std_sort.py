"""The C++ standard library's ``std::sort`` (libstdc++'s introsort) step by step, for a
comparator that is not a strict weak ordering, where its result depends on the algorithm's
every step: PyTorch's ``unique(dim=)`` sorts the slices with a lexicographic ``<`` that
NaN makes inconsistent (a NaN is neither below nor above anything).

libstdc++ sorts in three phases: an introsort loop that partitions ranges of more than 16
entries around the median of three (first + 1, middle, last - 1) moved to the front, recursing
on the right part and looping on the left, down to a depth limit of ``2 floor(log2 n)``
beyond which a range is heap-sorted; then an insertion sort of the first 16 entries and an
unguarded insertion of each later one. A consistent comparator gives the sorted order by any
algorithm (NumPy's, faster): use this only where it is not.
"""

from __future__ import annotations

from typing import Callable, List

__all__ = ["std_sort"]

_THRESHOLD = 16  # libstdc++'s _S_threshold


def std_sort(items: List[int], less: Callable[[int, int], bool]) -> List[int]:
    """``items`` sorted in place by ``less`` as libstdc++'s ``std::sort`` sorts them; returned."""
    n = len(items)
    if n > 1:
        _introsort_loop(items, 0, n, 2 * (n.bit_length() - 1), less)
        _final_insertion_sort(items, 0, n, less)
    return items


def _introsort_loop(a: list, first: int, last: int, depth: int, less: Callable) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_sort(a, first, last, less)
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, less)
        _introsort_loop(a, cut, last, depth, less)
        last = cut


def _partition_pivot(a: list, first: int, last: int, less: Callable) -> int:
    mid = first + (last - first) // 2
    x, y, z = first + 1, mid, last - 1
    if less(a[x], a[y]):
        pick = y if less(a[y], a[z]) else z if less(a[x], a[z]) else x
    else:
        pick = x if less(a[x], a[z]) else z if less(a[y], a[z]) else y
    a[first], a[pick] = a[pick], a[first]
    lo, hi, pivot = first + 1, last, a[first]
    while True:  # the unguarded partition (bounded here, where the C++ would run off the range)
        while lo < last - 1 and less(a[lo], pivot):
            lo += 1
        hi -= 1
        while hi > first and less(pivot, a[hi]):
            hi -= 1
        if not lo < hi:
            return lo
        a[lo], a[hi] = a[hi], a[lo]
        lo += 1


def _final_insertion_sort(a: list, first: int, last: int, less: Callable) -> None:
    end = min(last, first + _THRESHOLD)
    for i in range(first + 1, end):  # the guarded insertion sort of the first 16
        value = a[i]
        if less(value, a[first]):
            a[first + 1 : i + 1] = a[first:i]
            a[first] = value
        else:
            _linear_insert(a, first, i, less)
    for i in range(end, last):
        _linear_insert(a, first, i, less)


def _linear_insert(a: list, first: int, i: int, less: Callable) -> None:
    value = a[i]
    while i > first and less(value, a[i - 1]):
        a[i] = a[i - 1]
        i -= 1
    a[i] = value


def _heap_sort(a: list, first: int, last: int, less: Callable) -> None:
    """libstdc++'s ``__partial_sort(first, last, last)``: make a heap, then pop it."""
    n = last - first
    for parent in range((n - 2) // 2, -1, -1):
        _adjust_heap(a, first, parent, n, a[first + parent], less)
    while last - first > 1:
        last -= 1
        value = a[last]
        a[last] = a[first]
        _adjust_heap(a, first, 0, last - first, value, less)


def _adjust_heap(a: list, first: int, hole: int, n: int, value: int, less: Callable) -> None:
    top = child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if less(a[first + child], a[first + child - 1]):
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value
