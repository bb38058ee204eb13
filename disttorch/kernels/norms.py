"""Row normalisation, the arithmetic of layer norm and group norm: each row of ``x``
``(R, D)`` centred and scaled by its reciprocal standard deviation, and the gradient
through it. Rows are independent, so the op's threads take ranges of rows
(``threads.map_rows``); each row's mean and variance are sums, computed whole by one
thread: deterministic for a thread count, within float tolerance across thread counts.
"""

from __future__ import annotations

import numpy as np

from .threads import parallel_for

__all__ = ["normalize_rows", "normalize_rows_backward"]


def normalize_rows(x: np.ndarray, eps: float) -> tuple:
    """``(x̂, rstd)`` normalising each row of ``x`` ``(R, D)``; ``rstd`` is ``(R, 1)``. Each
    thread writes its rows of both in place (no copies of the parts' results)."""
    d = x.shape[1]
    xhat = np.empty(x.shape, dtype=x.dtype)
    rstd = np.empty((x.shape[0], 1), dtype=x.dtype)
    weights = np.full(d, 1.0 / d, dtype=x.dtype)

    def rows(start: int, stop: int) -> None:
        xc = xhat[start:stop]
        np.subtract(x[start:stop], (x[start:stop] @ weights)[:, None], out=xc)
        var = np.einsum("ij,ij->i", xc, xc) / d
        np.divide(1.0, np.sqrt(var + eps), out=rstd[start:stop, 0], casting="unsafe")
        xc *= rstd[start:stop]

    parallel_for(len(x), rows, work=3 * x.size)  # pays from some 512k elements (2 cores)
    return xhat, rstd


def normalize_rows_backward(gxhat: np.ndarray, xhat: np.ndarray, rstd: np.ndarray) -> np.ndarray:
    """Gradient through ``x̂ = (x - mean(x)) * rstd(x)`` (per row) given ``ĝ = dL/dx̂``."""
    d = gxhat.shape[1]
    gx = np.empty(gxhat.shape, dtype=gxhat.dtype)
    weights = np.full(d, 1.0 / d, dtype=gxhat.dtype)

    def rows(start: int, stop: int) -> None:
        g, h, out = gxhat[start:stop], xhat[start:stop], gx[start:stop]
        m2 = np.einsum("ij,ij->i", g, h) / d
        np.subtract(g, (g @ weights)[:, None], out=out)
        out -= h * m2[:, None].astype(out.dtype, copy=False)
        out *= rstd[start:stop]

    parallel_for(len(gxhat), rows, work=5 * gxhat.size)  # from some 300k
    return gx
