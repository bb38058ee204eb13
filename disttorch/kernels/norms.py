"""Row normalisation, the arithmetic of layer norm and group norm: each row of ``x``
``(R, D)`` centred and scaled by its reciprocal standard deviation, and the gradient
through it. Rows are independent, so the op's threads take ranges of rows
(``threads.map_rows``); each row's mean and variance are sums, computed whole by one
thread: deterministic for a thread count, within float tolerance across thread counts.
"""

from __future__ import annotations

import numpy as np

from .threads import map_rows

__all__ = ["normalize_rows", "normalize_rows_backward"]


def _rows(x: np.ndarray, eps: float) -> tuple:
    d = x.shape[1]
    mean = x @ np.full(d, 1.0 / d, dtype=x.dtype)
    xc = x - mean[:, None]
    var = np.einsum("ij,ij->i", xc, xc) / d
    rstd = (1.0 / np.sqrt(var + eps)).astype(x.dtype, copy=False)[:, None]
    xc *= rstd
    return xc, rstd


def normalize_rows(x: np.ndarray, eps: float) -> tuple:
    """``(x̂, rstd)`` normalising each row of ``x`` ``(R, D)``; ``rstd`` is ``(R, 1)``."""
    return map_rows(lambda rows: _rows(rows, eps), x, work=8 * x.size)


def _rows_backward(gxhat: np.ndarray, xhat: np.ndarray, rstd: np.ndarray) -> tuple:
    d = gxhat.shape[1]
    m1 = gxhat @ np.full(d, 1.0 / d, dtype=gxhat.dtype)
    m2 = np.einsum("ij,ij->i", gxhat, xhat) / d
    gx = gxhat - m1[:, None]
    gx -= xhat * m2[:, None].astype(gx.dtype, copy=False)
    gx *= rstd
    return (gx,)


def normalize_rows_backward(gxhat: np.ndarray, xhat: np.ndarray, rstd: np.ndarray) -> np.ndarray:
    """Gradient through ``x̂ = (x - mean(x)) * rstd(x)`` (per row) given ``ĝ = dL/dx̂``."""
    return map_rows(_rows_backward, gxhat, xhat, rstd, work=10 * gxhat.size)[0]
