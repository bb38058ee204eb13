"""Row normalisation, the arithmetic of layer norm and group norm: each row of ``x``
``(R, D)`` centred and scaled by its reciprocal standard deviation, and the gradient
through it. Rows are independent, so the op's threads take ranges of rows
(``threads.map_rows``); each row's mean and variance are sums, computed whole by one
thread: deterministic for a thread count, within float tolerance across thread counts.
"""

from __future__ import annotations

import numpy as np

from . import moments_rows
from .jit import compiled
from .threads import astype, get_num_threads, parallel_for

__all__ = [
    "layer_norm_float32",
    "layer_norm_input_grad_float32",
    "layer_norm_param_grads_float32",
    "normalize_rows",
    "normalize_rows_backward",
    "layer_norm_backward_16_bit",
]


def normalize_rows(x: np.ndarray, eps: float) -> tuple:
    """``(x̂, rstd)`` normalising each row of ``x`` ``(R, D)``; ``rstd`` is ``(R, 1)``. Each
    thread writes its rows of both in place (no copies of the parts' results)."""
    d = x.shape[1]
    xhat = np.empty(x.shape, dtype=x.dtype)
    rstd = np.empty((x.shape[0], 1), dtype=x.dtype)
    if d == 0:  # rows of no entries: no mean, no deviation
        rstd[:] = np.nan
        return xhat, rstd
    weights = np.full(d, 1.0 / d, dtype=x.dtype)

    def rows(start: int, stop: int) -> None:
        xc = xhat[start:stop]
        np.subtract(x[start:stop], (x[start:stop] @ weights)[:, None], out=xc)
        with np.errstate(invalid="ignore"):  # rows of no elements: mean 0, rstd NaN, as PyTorch's
            var = np.einsum("ij,ij->i", xc, xc) / np.float64(d)
        np.divide(1.0, np.sqrt(var + eps), out=rstd[start:stop, 0], casting="unsafe")
        xc *= rstd[start:stop]

    parallel_for(len(x), rows, work=3 * x.size)  # pays from some 512k elements (2 cores)
    return xhat, rstd


#: Units of work (``threads.py``) per element of the compiled float32 layer norm forward
#: and input gradient, which take PyTorch's steps lane by lane: on a (2048, 128) input, the
#: time of 8-12 float32 multiplies of the same size (forward), 6-9 (input gradient), on one
#: core of the 2-core machine. (Counted as 4, a GPT's layer norms of 262k elements never
#: split; split, they ran 1.96x faster.)
LAYER_NORM_WORK = 10


def _load_moments_loops():
    from . import moments_loops

    return moments_loops


def layer_norm_float32(
    x: np.ndarray, eps: float, weight: np.ndarray | None, bias: np.ndarray | None
) -> tuple:
    """Layer norm of the float32 rows of ``x`` ``(R, D)`` as PyTorch's CPU kernel computes it,
    to the bit (see :mod:`disttorch.kernels.moments_loops`): ``(out, x̂, mean, rstd)``, the
    last two ``(R, 1)``. Without numba the same steps run in NumPy, all rows at once
    (:mod:`.moments_rows`). Each thread takes a range of rows."""
    loops = compiled(_load_moments_loops)
    if loops is None:
        return _layer_norm_float32_numpy(x, eps, weight, bias)
    x = np.ascontiguousarray(x)
    none = np.empty(0, np.float32)
    w = none if weight is None else np.ascontiguousarray(weight.reshape(-1))
    b = none if bias is None else np.ascontiguousarray(bias.reshape(-1))
    out, xhat = np.empty_like(x), np.empty_like(x)
    mean, rstd = np.empty((len(x), 1), np.float32), np.empty((len(x), 1), np.float32)

    def rows(start: int, stop: int) -> None:
        loops.row_moments(x[start:stop], eps, mean[start:stop, 0], rstd[start:stop, 0])
        loops.layer_norm_rows(
            x[start:stop], mean[start:stop, 0], rstd[start:stop, 0], w, b, xhat[start:stop], out[start:stop]
        )

    parallel_for(len(x), rows, work=LAYER_NORM_WORK * x.size)
    return out, xhat, mean, rstd


def _layer_norm_float32_numpy(
    x: np.ndarray, eps: float, weight: np.ndarray | None, bias: np.ndarray | None
) -> tuple:
    """:func:`layer_norm_float32` without numba."""
    w = None if weight is None else weight.reshape(-1)
    b = None if bias is None else bias.reshape(-1)
    out, xhat = np.empty_like(x), np.empty_like(x)
    mean, rstd = np.empty((len(x), 1), np.float32), np.empty((len(x), 1), np.float32)

    def rows(start: int, stop: int) -> None:
        with np.errstate(invalid="ignore", divide="ignore"):  # rows of no elements: NaN
            mean[start:stop, 0], rstd[start:stop, 0] = moments_rows.row_moments(x[start:stop], eps)
            out[start:stop], xhat[start:stop] = moments_rows.layer_norm_rows(
                x[start:stop], mean[start:stop], rstd[start:stop], w, b
            )

    parallel_for(len(x), rows, work=LAYER_NORM_WORK * x.size)
    return out, xhat, mean, rstd


def layer_norm_param_grads_float32(
    g: np.ndarray, x: np.ndarray, mean: np.ndarray, rstd: np.ndarray, need_w: bool, need_b: bool
) -> tuple:
    """The weight and bias gradients of float32 layer norm (``None`` where not needed),
    ``sum over rows of g * x̂`` and of ``g`` for ``g``, ``x`` ``(R, D)`` and the forward's
    ``mean``/``rstd`` ``(R, 1)``, as PyTorch's CPU kernel sums them, to the bit: the rows
    split in one contiguous share per thread, each share added row after row into zeroed
    buffers (:func:`.moments_loops.layer_norm_param_grad_rows`), then the buffers added in
    order (in NumPy without numba: :mod:`.moments_rows`)."""
    loops = compiled(_load_moments_loops) or moments_rows
    g, x = np.ascontiguousarray(g, np.float32), np.ascontiguousarray(x, np.float32)
    mean, rstd = np.ascontiguousarray(mean.reshape(-1)), np.ascontiguousarray(rstd.reshape(-1))
    n = len(x)
    chunk = -(-n // max(1, min(get_num_threads(), n))) if n else 1
    starts = range(0, n, chunk)
    acc_w = np.zeros((len(starts), x.shape[1] if need_w else 0), dtype=np.float32)
    acc_b = np.zeros((len(starts), x.shape[1] if need_b else 0), dtype=np.float32)

    def shares(first: int, last: int) -> None:  # (each share on one of the op's threads)
        for k in range(first, last):
            rows = slice(starts[k], starts[k] + chunk)
            loops.layer_norm_param_grad_rows(g[rows], x[rows], mean[rows], rstd[rows], acc_w[k], acc_b[k])

    parallel_for(len(starts), shares, work=2 * x.size)
    return tuple(_buffers_sum(acc) if need else None for acc, need in ((acc_w, need_w), (acc_b, need_b)))


def _buffers_sum(accs: np.ndarray) -> np.ndarray:
    """The threads' buffers ``(T, D)`` added in order, from zero."""
    total = np.zeros(accs.shape[1], dtype=np.float32)
    for acc in accs:
        total += acc
    return total


def layer_norm_input_grad_float32(
    g: np.ndarray, x: np.ndarray, mean: np.ndarray, rstd: np.ndarray, weight: np.ndarray | None
) -> np.ndarray:
    """The input gradient of float32 layer norm for ``g``, ``x`` ``(R, D)``, the forward's
    ``mean``/``rstd`` ``(R, 1)`` and ``weight`` ``(D,)`` or ``None``, as PyTorch's CPU kernel
    computes it, to the bit (:func:`.moments_loops.layer_norm_input_grad_rows`); each thread
    takes a range of rows (in NumPy without numba: :mod:`.moments_rows`)."""
    loops = compiled(_load_moments_loops) or moments_rows
    g, x = np.ascontiguousarray(g, np.float32), np.ascontiguousarray(x, np.float32)
    mean, rstd = np.ascontiguousarray(mean.reshape(-1)), np.ascontiguousarray(rstd.reshape(-1))
    w = np.empty(0, np.float32) if weight is None else np.ascontiguousarray(weight.reshape(-1))
    gx = np.empty_like(x)

    def rows(start: int, stop: int) -> None:
        loops.layer_norm_input_grad_rows(
            g[start:stop], x[start:stop], mean[start:stop], rstd[start:stop], w, gx[start:stop]
        )

    parallel_for(len(x), rows, work=LAYER_NORM_WORK * x.size)
    return gx


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
    g: np.ndarray,
    x: np.ndarray,
    mean: np.ndarray,
    rstd: np.ndarray,
    w: np.ndarray | None,
    low: np.dtype,
    mixed: bool = False,
) -> tuple:
    """PyTorch's CPU layer-norm backward for bfloat16/float16 inputs, on float32 copies of
    ``g``, ``x`` ``(R, D)`` and ``w`` ``(D,)``: it sums the weight and bias gradients over the
    rows of each thread's share in a ``low`` buffer (rounded after every row), the threads'
    buffers then added in float32. With 16-bit parameters it reads the row statistics
    ``mean``/``rstd`` ``(R, 1)`` as saved in ``low`` and rounds the sums to ``low``; with
    float32 parameters (``mixed``) both stay float32. Returns float32 ``(gx, gw, gb)``."""
    if not mixed:
        mean = astype(astype(mean, low), np.float32)
    a = rstd if mixed else astype(astype(rstd, low), np.float32)
    gw_rows = g * (a * x + (-a * mean))  # dy * (a x + b), b = -a mean
    scale = np.float32(1.0 / x.shape[1])
    gg = g * w if w is not None else g
    ds = np.einsum("ij,ij->i", gg, x)[:, None]
    db = gg.sum(1, keepdims=True)
    b = (db * mean - ds) * a * a * a * scale
    c = -b * mean - db * a * scale
    gx = a * gg + b * x + c
    final = None if mixed else low
    return gx, _thread_buffers_sum(gw_rows, low, final), _thread_buffers_sum(g, low, final)


def _thread_buffers_sum(rows: np.ndarray, low: np.dtype, final: np.dtype | None = None) -> np.ndarray:
    """The column sums of ``rows`` as PyTorch's reduced-precision norm backward makes them:
    the rows split in one contiguous share per thread, each share summed row after row
    into a buffer of dtype ``low``, and the buffers added in float32 (then rounded to
    ``final`` when given)."""
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
    return total if final is None else astype(astype(total, final), np.float32)
