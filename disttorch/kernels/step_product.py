"""``h @ W`` at every step of a recurrent loop, in whichever of two forms this machine's BLAS
runs faster.

A recurrent layer multiplies a few rows (the batch) by the same ``(K, G)`` weight at every
step. OpenBLAS copies the weight into its panel layout at every call, and for a few rows
that copy costs about as much as the arithmetic. Its small-matrix kernels skip the copy;
cutting the product into column blocks (one batched ``matmul`` over a ``(G/w, K, w)`` copy
of the weight, writing into strided views of the output) makes each block small enough for
them, on some CPUs and kernels and not on others (measured: 32-column blocks 35% faster for
a 32 x 256 by 256 x 1024 product with OpenBLAS's SkylakeX kernels, 15% slower with its
Haswell kernels; 16-column blocks 9% faster for backward's 32 x 1024 by 1024 x 256). So the
first loop of a given shape times the forms and every later one uses the fastest. All
compute the same dot products (equal bit for bit on the kernels measured).
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["StepProduct"]

WIDTHS = (16, 32, 64)  # the column blocks tried
MIN_STEPS = 8  # loops shorter than this (a cell's step) skip set-up that pays off per step
_fastest: dict[tuple, int] = {}  # (rows, K, G, dtype) -> block width measured fastest (0: one product)


class StepProduct:
    """``product(h, out)`` writes ``h @ w`` (``h``: at most ``rows`` rows) into ``out``, a
    C-contiguous ``(len(h), G)`` array, for a loop of ``steps`` such products."""

    def __init__(self, w: np.ndarray, rows: int, steps: int) -> None:
        self.w = w
        self.blocks: np.ndarray | None = None
        k, g = w.shape
        widths = [c for c in WIDTHS if g % c == 0 and g > c]
        if not (w.flags.c_contiguous and widths and rows > 1 and steps >= MIN_STEPS):
            return
        key = (rows, k, g, w.dtype.str)
        if key not in _fastest:
            _fastest[key] = _measure(w, rows, widths)
        if _fastest[key]:
            self.blocks = _blocks(w, _fastest[key])

    def __call__(self, h: np.ndarray, out: np.ndarray) -> None:
        if self.blocks is None:
            np.matmul(h, self.w, out=out)
        else:
            np.matmul(h, self.blocks, out=_blocked_view(out, self.blocks.shape[2]))


def _blocks(w: np.ndarray, width: int) -> np.ndarray:
    """``w (K, G)`` as ``(G/width, K, width)``, contiguous: block ``j`` is its columns
    ``width*j`` to ``width*(j+1)``."""
    k, g = w.shape
    return np.ascontiguousarray(w.reshape(k, g // width, width).transpose(1, 0, 2))


def _blocked_view(out: np.ndarray, width: int) -> np.ndarray:
    """``out (b, G)`` seen as ``(G/width, b, width)``, the layout the blocks' products write."""
    if not out.flags.c_contiguous:
        raise ValueError("the step product writes into a C-contiguous array")
    return out.reshape(out.shape[0], -1, width).transpose(1, 0, 2)


def _measure(w: np.ndarray, rows: int, widths: list[int], rounds: int = 5) -> int:
    """The fastest form (a block width, or 0 for one product), timed alternately, best of
    ``rounds`` each."""
    h = np.ones((rows, w.shape[0]), dtype=w.dtype)
    out = np.empty((rows, w.shape[1]), dtype=w.dtype)
    forms = [(0, w, out)] + [(c, _blocks(w, c), _blocked_view(out, c)) for c in widths]
    best = [float("inf")] * len(forms)
    for _ in range(rounds):
        for i, (_, weight, target) in enumerate(forms):
            start = time.perf_counter()
            np.matmul(h, weight, out=target)
            best[i] = min(best[i], time.perf_counter() - start)
    return forms[best.index(min(best))][0]
