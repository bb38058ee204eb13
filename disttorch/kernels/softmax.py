"""Softmax and log-softmax along one axis, stably (the maximum subtracted first), split
over the op's threads along another axis (``threads.parallel_over``): every row is
computed whole by one thread, so results are bitwise the same for any thread count."""

from __future__ import annotations

import numpy as np

from .threads import parallel_over

__all__ = ["log_softmax", "softmax"]


def softmax(a: np.ndarray, dim: int) -> np.ndarray:
    """``exp(a - max) / sum(exp(a - max))`` along ``dim``."""
    out = np.empty_like(a)

    def part(index: tuple) -> None:
        x, e = a[index], out[index]
        np.subtract(x, x.max(axis=dim, keepdims=True), out=e)
        np.exp(e, out=e)
        e /= e.sum(axis=dim, keepdims=True)

    parallel_over(a.shape, part, skip=(dim,), work=3 * a.size)
    return out


def log_softmax(a: np.ndarray, dim: int) -> tuple:
    """``(a - max - log(sum(exp(a - max))), softmax(a))`` along ``dim``: the result and the
    probabilities backward needs, from one ``exp``."""
    out, probs = np.empty_like(a), np.empty_like(a)

    def part(index: tuple) -> None:
        x, shifted, e = a[index], out[index], probs[index]
        np.subtract(x, x.max(axis=dim, keepdims=True), out=shifted)
        np.exp(shifted, out=e)
        s = e.sum(axis=dim, keepdims=True)
        e /= s
        shifted -= np.log(s)

    parallel_over(a.shape, part, skip=(dim,), work=3 * a.size)
    return out, probs
