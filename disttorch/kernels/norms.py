"""Row normalisation, the arithmetic of layer norm and group norm: each row of ``x``
``(R, D)`` centred and scaled by its reciprocal standard deviation, and the gradient
through it. Rows are independent, so the op's threads take ranges of rows
(``threads.map_rows``); each row's mean and variance are sums, computed whole by one
thread: deterministic for a thread count, within float tolerance across thread counts.
"""

from __future__ import annotations

import numpy as np

from .jit import compiled
from .threads import astype, get_num_threads, parallel_for

__all__ = ["normalize_rows", "normalize_rows_backward", "layer_norm_backward_16_bit"]


def normalize_rows(x: np.ndarray, eps: float, moments: bool = False) -> tuple:
    """``(x̂, rstd)`` normalising each row of ``x`` ``(R, D)``; ``rstd`` is ``(R, 1)``. Each
    thread writes its rows of both in place (no copies of the parts' results). With
    ``moments``, a contiguous float32 ``x``'s mean and ``rstd`` are PyTorch's layer norm's
    (its Welford ``RowwiseMoments``, compiled: ``kernels/torch_layer_norm_loops.py``) where
    numba is installed; else a BLAS mean and a sum of squares (a unit off in about half the
    rows)."""
    d = x.shape[1]
    xhat = np.empty(x.shape, dtype=x.dtype)
    rstd = np.empty((x.shape[0], 1), dtype=x.dtype)
    weights = np.full(d, 1.0 / d, dtype=x.dtype)
    loops = compiled(_load_moments) if moments and x.dtype == np.float32 and x.flags.c_contiguous else None

    def rows(start: int, stop: int) -> None:
        xc = xhat[start:stop]
        if loops is not None:
            mean = np.empty(stop - start, np.float32)
            loops.row_moments(x[start:stop], np.float32(eps), mean, rstd[start:stop, 0])
            np.subtract(x[start:stop], mean[:, None], out=xc)
            xc *= rstd[start:stop]
            return
        np.subtract(x[start:stop], (x[start:stop] @ weights)[:, None], out=xc)
        var = np.einsum("ij,ij->i", xc, xc) / d
        np.divide(1.0, np.sqrt(var + eps), out=rstd[start:stop, 0], casting="unsafe")
        xc *= rstd[start:stop]

    parallel_for(len(x), rows, work=3 * x.size)  # pays from some 512k elements (2 cores)
    return xhat, rstd


def _load_moments() -> object:
    from . import torch_layer_norm_loops

    return torch_layer_norm_loops


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


def layer_norm_backward_16_bit(
    g: np.ndarray, x: np.ndarray, mean: np.ndarray, rstd: np.ndarray, w: np.ndarray | None, low: np.dtype
) -> tuple:
    """PyTorch's CPU layer-norm backward for bfloat16/float16 inputs and parameters, on
    float32 copies of ``g``, ``x`` ``(R, D)`` and ``w`` ``(D,)``: it reads the row statistics
    ``mean``/``rstd`` ``(R, 1)`` as saved in the 16-bit dtype ``low``, and sums the weight
    and bias gradients over the rows of each thread's share in a ``low`` buffer (rounded
    after every row), the threads' buffers then added. Returns float32 ``(gx, gw, gb)``."""
    mean = astype(astype(mean, low), np.float32)
    a = astype(astype(rstd, low), np.float32)
    gw_rows = g * (a * x + (-a * mean))  # dy * (a x + b), b = -a mean
    scale = np.float32(1.0 / x.shape[1])
    gg = g * w if w is not None else g
    ds = np.einsum("ij,ij->i", gg, x)[:, None]
    db = gg.sum(1, keepdims=True)
    b = (db * mean - ds) * a * a * a * scale
    c = -b * mean - db * a * scale
    gx = a * gg + b * x + c
    return gx, _thread_buffers_sum(gw_rows, low), _thread_buffers_sum(g, low)


def _thread_buffers_sum(rows: np.ndarray, low: np.dtype) -> np.ndarray:
    """The column sums of ``rows`` as PyTorch's reduced-precision norm backward makes them:
    the rows split in one contiguous share per thread, each share summed row after row
    into a buffer of dtype ``low``, and the buffers added in float32 and rounded."""
    n = len(rows)
    threads = max(1, min(get_num_threads(), n))
    chunk = -(-n // threads) if n else 1
    total = np.zeros(rows.shape[1], dtype=np.float32)
    for start in range(0, n, chunk):
        acc = np.zeros(rows.shape[1], dtype=np.float32)
        for row in rows[start : start + chunk]:
            acc += row
            acc = astype(astype(acc, low), np.float32)
        total += acc
    return astype(astype(total, low), np.float32)
