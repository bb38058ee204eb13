"""The variance (or standard deviation) of a float32/float64 array over some dims, rounding
for rounding as PyTorch's CPU kernel computes it: ``WelfordOps`` in float64, one output
element at a time over its elements in ``TensorIterator``'s order (the reduced dims by
stride, the smallest first), ``m2 / (n - correction)`` (or its square root) rounded once to
the array's dtype. A single output of more than ``GRAIN`` elements with several threads is
Welford'd in one contiguous piece per thread, the pieces merged in order (``combine``). NumPy's two passes (mean, then the squared deviations) round otherwise:
``x.var(-1)`` was an ulp off in a third (float32) to nine tenths (float64) of the rows.

PyTorch's reduction to one element takes another path (``std_var_all_cpu``): the squared
deviations from the mean summed in float64, in order within each block its iterator hands
its loop, the blocks' sums in order (:func:`squared_deviations`). 16-bit inputs take others.
The Welford loop is compiled with numba (``kernels/torch_var_loops.py``); without numba the
caller keeps NumPy's order.
"""

from __future__ import annotations

import numpy as np

from .jit import compiled
from .threads import get_num_threads, parallel_for
from .torch_sum import GRAIN, reduction_walk, walk_offsets

__all__ = ["dims_var", "squared_deviations"]


def dims_var(x: np.ndarray, dims: tuple, correction: float, take_sqrt: bool) -> tuple | None:
    """``(variance, mean)`` of ``x`` over ``dims`` with ``correction`` (the standard deviation
    with ``take_sqrt``), the reduced dims kept as size 1, as PyTorch's CPU kernel computes them
    (its ``var_mean`` returns that Welford mean, which can differ from ``mean()`` by an ulp);
    None without numba, for other dtypes, or where :func:`reduction_walk` finds no walk
    (a flipped or empty ``x``, no reduced dim of size above 1)."""
    loops = compiled(_load_loops)
    if loops is None or x.dtype not in (np.float32, np.float64):
        return None
    walk = reduction_walk(x, dims)
    if walk is None:
        return None
    buf, sizes, strides, ostrides, out_shape = walk
    reduced = sum(1 for o in ostrides if o == 0)  # (the first dims)
    steps, _ = walk_offsets(sizes[:reduced], strides[:reduced], ostrides[:reduced])
    bases, outs = walk_offsets(sizes[reduced:], strides[reduced:], ostrides[reduced:])
    out, mean = np.empty(out_shape, x.dtype), np.empty(out_shape, x.dtype)
    flat, means, correction, take_sqrt = out.reshape(-1), mean.reshape(-1), float(correction), bool(take_sqrt)

    threads = get_num_threads()
    if bases.size == 1 and threads > 1 and steps.size > GRAIN:
        var, means[0] = _split_welford(loops, buf, bases[0], steps, threads, correction)
        flat[0] = np.sqrt(var) if take_sqrt else var
        return out, mean

    def part(first: int, last: int) -> None:  # (each output element whole on one thread)
        loops.welford(buf, bases[first:last], outs[first:last], steps, correction, take_sqrt, flat, means)

    parallel_for(bases.size, part, x.size)
    return out, mean


def _split_welford(
    loops: object, buf: np.ndarray, base: int, steps: np.ndarray, threads: int, correction: float
) -> tuple:
    """``(variance, mean)`` in float64 of one output's elements as PyTorch's
    ``binary_kernel_reduce`` computes them with ``threads`` threads: a Welford accumulator
    per contiguous piece (``ceil(n / pieces)`` elements), merged in order by ``WelfordOps``'
    ``combine``."""
    n = steps.size
    size = -(-n // min(threads, -(-n // GRAIN)))
    mean, m2, count = 0.0, 0.0, 0.0
    for start in range(0, n, size):
        b_mean, b_m2, b_count = loops.welford_piece(buf, base, steps, start, min(n, start + size))
        if count == 0:
            mean, m2, count = b_mean, b_m2, b_count
            continue
        delta = b_mean - mean
        total = count + b_count
        share = b_count / total
        mean, m2, count = mean + delta * share, m2 + b_m2 + delta * delta * count * share, total
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.float64(m2) / np.float64(count - correction if count > correction else 0.0), mean


def squared_deviations(x: np.ndarray, mean: np.float64, threads: int) -> np.float64:
    """``sum((x - mean)**2)`` in float64 as PyTorch's ``std_var_all_cpu`` adds it: a dense
    ``x`` in memory order, from ``GRAIN`` elements on in one contiguous piece per thread
    (``ceil(n / pieces)`` elements), each piece in order from zero, the pieces' sums in order;
    a strided ``x`` (a slice) by its iterator's 2-D blocks, each summed in order from zero and
    added in order (with one piece; with more, in memory order as a dense one)."""
    walk = reduction_walk(x, tuple(range(x.ndim)))
    if walk is not None and len(walk[1]) > 1 and (threads == 1 or x.size <= GRAIN):
        buf, sizes, strides = walk[:3]
        outer, _ = walk_offsets(sizes[2:], strides[2:], [0] * len(sizes[2:]))
        rows = outer[:, None, None] + np.arange(sizes[1])[:, None] * strides[1]
        index = rows + np.arange(sizes[0]) * strides[0]  # (block, row, element)
        centred = buf[index.reshape(outer.size, -1)].astype(np.float64) - mean
        blocks = np.add.accumulate(centred * centred, axis=1)[:, -1]
        return np.add.accumulate(np.concatenate([[0.0], blocks]))[-1]
    flat = x.ravel(order="K")
    n = flat.size
    pieces = min(threads, -(-n // GRAIN)) if n > GRAIN else 1
    size = -(-n // pieces)
    total = np.float64(0)
    for start in range(0, n, size):
        centred = flat[start : start + size].astype(np.float64) - mean
        total += np.add.accumulate(centred * centred)[-1]
    return total


def _load_loops() -> object:
    from . import torch_var_loops

    return torch_var_loops
