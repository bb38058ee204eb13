"""Float32 batch norm's statistics, affine map and gradients, rounding for rounding as PyTorch's
CPU kernels compute them (``batch_norm_kernel.cpp``, ``Normalization.cpp``) for an ``(N, C, *)``
input that is contiguous or channels-last (:func:`channel_view`: *planes* ``(N, C, M)`` of a
contiguous input with a spatial size ``M > 1``, else *rows* ``(R, C)`` with the channels side
by side, as PyTorch's channels-last kernels read a channels-last input or an ``(N, C)`` one):

- planes: each channel's sum in float64, its elements in memory order;
  ``mean = float32(sum / count)``; ``var_sum`` the float64 sum of the float32 squares
  ``(x - mean)**2``, rounded to float32. Rows: the channels side by side in float32
  vectors: each thread's rows added in order into its own sums (``var_sum`` by fused
  multiply-adds ``d * d + sum``), the threads' sums in order in float64,
  ``mean = float32(sum / R)``.
- ``invstd = float32(1 / sqrt(float64(var_sum / count) + eps))``; the running mean
  ``momentum * mean + (1 - momentum) * running`` in float32, the running variance with the
  unbiased ``var_sum / (count - 1)`` added in float64.
- ``alpha = invstd * weight``, ``beta = bias - mean * alpha`` (fused), the output
  ``x * alpha + beta`` (fused): the compiler fuses them in PyTorch's vectorised loop.
- backward (:func:`backward`), per channel ``sum = sum(dy)`` and ``dotp = sum((x - mean) * dy)``.
  Planes: each ``(n, c)`` plane reduced in float32 as PyTorch's ``vec::reduce_all`` does with
  8-lane vectors (lane ``j % 8`` takes element ``j`` in order, a product rounded on its own
  but fused into the lane for the last partial vector; the lanes added as a tree,
  ``((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7))``; a plane shorter than a vector
  added in order), the planes' results added in float64. Rows: as the statistics, the
  products fused. ``k = dotp * invstd * invstd / count`` and ``grad_mean = sum / count``
  (float32; for planes ``grad_mean`` divides the float64 sum), the input gradient
  ``(dy - grad_mean - (x - mean) * k) * invstd * w``, the product fused into the
  subtraction (rows: but for the channels past the last whole vector of 8).
  ``grad_weight = dotp * invstd``, ``grad_bias = sum``; in evaluation mode the input gradient
  is ``dy * invstd * w`` with ``invstd = 1 / sqrt(float64(running_var) + eps)``.

A fused multiply-add ``a * b + c`` of float32 values is the float64 product (exact) plus
``c``, rounded to float64 and then to float32 (the second rounding can differ from one
rounding only for a sum within 2**-29 of a float32 tie). NumPy's einsum sums the channels
pairwise: its means and variances were an ulp off in most channels, and so was every output.
With numba the loops are compiled (``kernels/torch_batch_norm_loops.py``, the processor's
fused multiply-add): the same numbers in one pass each.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import compiled
from .threads import elementwise, get_num_threads, parallel_over
from .torch_sum import dims_sum

__all__ = [
    "affine",
    "backward",
    "channel_view",
    "eval_invstd",
    "fused_affine",
    "running_update",
    "train_stats",
]

_F32, _F64 = np.float32, np.float64
_LANES = 8  # float32 lanes of the 32-byte vectors PyTorch's batch-norm kernels use


def channel_view(x: np.ndarray) -> np.ndarray | None:
    """``x`` ``(N, C, *)`` as PyTorch's float32 kernels read it: a C-contiguous input as
    planes ``(N, C, M)`` (``M > 1``), an input whose channels are innermost in memory
    (``(N, C)``, ``(N, C, 1)``, channels-last) as rows ``(R, C, 1)``; None for any other
    layout. The result is a view of ``x``."""
    c = x.shape[1]
    if x.flags.c_contiguous and x.size > x.shape[0] * c:
        return x.reshape(x.shape[0], c, -1)
    last = np.moveaxis(x, 1, -1)
    if last.flags.c_contiguous:
        return last.reshape(-1, c, 1)
    return None


def from_view(out3: np.ndarray, shape: tuple) -> np.ndarray:
    """An ``(N, C, M)`` or ``(R, C, 1)`` result of :func:`channel_view`'s layout back as
    ``shape`` (a view, laid out as the input was)."""
    if out3.shape[2] == 1 and len(shape) > 2 and math.prod(shape[2:]) > 1:  # rows of a channels-last input
        return np.moveaxis(out3.reshape(shape[:1] + shape[2:] + shape[1:2]), -1, 1)
    return out3.reshape(shape)


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 ``a * b + c`` rounded (nearly always) once (see the module's note)."""
    return (np.multiply(a, b, dtype=_F64) + c).astype(_F32)


def train_stats(x3: np.ndarray) -> tuple:
    """``(mean, var_sum)`` per channel of the contiguous float32 ``x3`` ``(N, C, M)``, as
    PyTorch's ``batch_norm_cpu_collect_stats`` computes them (ranges of channels on the op's
    threads, each channel whole on one)."""
    n, c, m = x3.shape
    mean, var_sum = np.empty(c, _F32), np.empty(c, _F32)

    loops = compiled(_load_loops)
    if m == 1:
        rows, threads = x3[:, :, 0], get_num_threads()
        if loops is None:
            return _row_stats(rows, threads)
        loops.row_stats(rows, -(-n // min(threads, n)), mean, var_sum)
        return mean, var_sum

    def channels(index: tuple) -> None:
        part = index[1]
        if loops is not None:
            loops.channel_stats(x3[:, part], mean[part], var_sum[part])
            return
        for k in range(c)[part]:
            values = x3[:, k, :].reshape(-1)
            mean[k] = _F32(np.add.accumulate(values, dtype=_F64)[-1] / values.size)
            d = values - mean[k]
            var_sum[k] = np.add.accumulate(d * d, dtype=_F64)[-1]

    parallel_over(x3.shape, channels, skip=(0, 2))
    return mean, var_sum


def _row_stats(rows: np.ndarray, threads: int) -> tuple:
    """:func:`train_stats` of ``(N, C)`` rows as PyTorch's channels-side-by-side kernel takes
    them with ``threads`` threads: ``ceil(N / threads)`` rows a thread, each thread's rows
    added in order into its own float32 sums (fused ``d * d + sum`` for the variance), the
    threads' sums added in float64."""
    n = rows.shape[0]
    chunk = -(-n // min(threads, n))
    total = np.zeros(rows.shape[1], _F64)
    for start in range(0, n, chunk):
        total += np.add.accumulate(rows[start : start + chunk], axis=0)[-1]
    mean = (total / n).astype(_F32)
    total[:] = 0
    for start in range(0, n, chunk):
        acc = np.zeros(rows.shape[1], _F32)
        for row in rows[start : start + chunk]:
            d = row - mean
            acc = _fma(d, d, acc)
        total += acc
    return mean, total.astype(_F32)


def running_update(running_mean, running_var, mean, var_sum, count: int, momentum: float, eps: float):
    """PyTorch's update of the float32 running statistics in place (either may be None) from
    :func:`train_stats`; returns ``invstd``."""
    mom = _F32(momentum)
    if running_mean is not None:
        running_mean[...] = mom * mean + (_F32(1) - mom) * running_mean
    if running_var is not None:
        unbiased = (var_sum / _F32(max(count - 1, 0))).astype(_F64)
        running_var[...] = (_F64(mom) * unbiased + (_F32(1) - mom) * running_var).astype(_F32)
    return (1 / np.sqrt((var_sum / _F32(count)).astype(_F64) + eps)).astype(_F32)


def affine(x3: np.ndarray, mean: np.ndarray, invstd: np.ndarray, weight, bias) -> np.ndarray:
    """``x * alpha + beta`` per channel of ``x3`` ``(N, C, M)`` with ``alpha = invstd * weight``
    and ``beta = bias - mean * alpha`` (fused, float32; ``weight``/``bias`` None: 1 and 0)."""
    alpha = invstd if weight is None else (invstd * weight).astype(_F32)
    beta = _fma(-mean, alpha, np.zeros_like(alpha) if bias is None else bias)
    return fused_affine(x3, alpha, beta)


def fused_affine(x3: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """float32 ``x * alpha + beta`` rounded once, per channel of ``x3`` ``(N, C, M)`` (compiled
    where numba is installed, on the op's threads)."""
    loops = compiled(_load_loops)
    if loops is None:
        return elementwise(_fma, x3, alpha[:, None], beta[:, None])
    out = np.empty(x3.shape, _F32)

    def part(index: tuple) -> None:  # (a range of images or of channels)
        index = index + (slice(None),) * (3 - len(index))
        loops.affine(x3[index], alpha[index[1]], beta[index[1]], out[index])

    parallel_over(x3.shape, part, skip=(2,))
    return out


def eval_invstd(running_var: np.ndarray, eps: float) -> np.ndarray:
    """``float32(1 / sqrt(float64(running_var) + eps))``: the ``invstd`` of PyTorch's backward
    in evaluation mode (its forward computes it in float32)."""
    return (1 / np.sqrt(running_var.astype(_F64) + eps)).astype(_F32)


def backward(
    x3: np.ndarray, g3: np.ndarray, mean: np.ndarray, invstd: np.ndarray, weight, train: bool, need_x: bool
) -> tuple:
    """``(grad_input, grad_weight, grad_bias)`` of batch norm for ``x3`` and the output gradient
    ``g3`` in :func:`channel_view`'s layout (the same one), ``mean``/``invstd`` the saved
    statistics (training) or the running mean and :func:`eval_invstd` (evaluation);
    ``weight`` None: 1. ``grad_input`` (in ``x3``'s layout) is None unless ``need_x``."""
    n, c, m = x3.shape
    count = n * m
    loops = compiled(_load_loops)
    if m > 1:  # planes: float32 lanes per plane, the planes added in float64
        sums, dotps = np.empty(c, _F64), np.empty(c, _F64)

        def channels(index: tuple) -> None:
            part = index[1]
            if loops is not None:
                loops.plane_sums(x3[:, part], g3[:, part], mean[part], sums[part], dotps[part])
            else:
                sums[part], dotps[part] = _plane_sums(x3[:, part], g3[:, part], mean[part])

        parallel_over(x3.shape, channels, skip=(0, 2))
        dotp = dotps.astype(_F32)
        grad_weight = (dotps * invstd).astype(_F32)
        grad_bias = sums.astype(_F32)
        grad_mean = (sums / count).astype(_F32)
    else:  # rows: each thread's rows into float32 sums, the threads' sums added in float64
        rows_x, rows_g = x3[:, :, 0], g3[:, :, 0]
        chunk = -(-n // min(get_num_threads(), n))
        grad_bias, dotp = np.empty(c, _F32), np.empty(c, _F32)
        if loops is not None:
            loops.row_sums(rows_x, rows_g, mean, chunk, grad_bias, dotp)
        else:
            _row_sums(rows_x, rows_g, mean, chunk, grad_bias, dotp)
        grad_weight = dotp * invstd
        grad_mean = grad_bias / _F32(count)
    if not need_x:
        return None, grad_weight, grad_bias
    w = np.ones(c, _F32) if weight is None else weight
    if not train:
        return (
            elementwise(np.multiply, elementwise(np.multiply, g3, invstd[:, None]), w[:, None]),
            grad_weight,
            grad_bias,
        )
    k = dotp * invstd * invstd / _F32(count)
    fused = c if m > 1 else c - c % _LANES  # (rows: the last partial vector unfused)
    if loops is None:
        return _input_grad(x3, g3, mean, k, grad_mean, invstd, w, fused), grad_weight, grad_bias
    out = np.empty(x3.shape, _F32)

    def part(index: tuple) -> None:
        index = index + (slice(None),) * (3 - len(index))
        ch = index[1]
        last = max(0, min(fused - (ch.start or 0), len(range(c)[ch])))
        loops.input_grad(
            x3[index], g3[index], mean[ch], k[ch], grad_mean[ch], invstd[ch], w[ch], last, out[index]
        )

    parallel_over(x3.shape, part, skip=(2,))
    return out, grad_weight, grad_bias


def backward_strided(
    x: np.ndarray, g: np.ndarray, mean: np.ndarray, invstd: np.ndarray, weight, train: bool, need_x: bool
) -> tuple:
    """:func:`backward` for an output gradient ``g`` (``(N, C, *)``, float32) laid out otherwise
    than ``x`` (expanded, transposed, another memory format), as PyTorch's path for it: ``sum``
    by PyTorch's ``sum`` over the other dims, ``dotp`` the float64 sum of the float32
    products ``(x - mean) * dy``, the input gradient in two rounded passes,
    ``gi = (x - mean) * k`` then ``(dy - grad_mean - gi) * invstd * w``."""
    dims = (0,) + tuple(range(2, x.ndim))
    per = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    count = x.size // x.shape[1]
    grad_bias = dims_sum(g, dims, get_num_threads())
    grad_bias = (np.add.reduce(g, axis=dims) if grad_bias is None else grad_bias).reshape(-1)
    centred = x - mean.reshape(per)
    dotp = np.add.reduce(centred * g, axis=dims, dtype=_F64)
    grad_weight = (dotp * invstd).astype(_F32)
    if not need_x:
        return None, grad_weight, grad_bias
    w = (np.ones(x.shape[1], _F32) if weight is None else weight).reshape(per)
    if not train:
        return g * invstd.reshape(per) * w, grad_weight, grad_bias
    k = dotp.astype(_F32) * invstd * invstd / _F32(count)
    grad_mean = grad_bias / _F32(count)
    gx = (g - grad_mean.reshape(per)) - centred * k.reshape(per)
    return gx * invstd.reshape(per) * w, grad_weight, grad_bias


def _plane_sums(x3: np.ndarray, g3: np.ndarray, mean: np.ndarray) -> tuple:
    """NumPy form of the planes' ``(sum, dotp)`` in float64 (see the module's note)."""
    d3 = x3 - mean[:, None]
    return (
        np.add.accumulate(_lane_reduce(g3), axis=0, dtype=_F64)[-1],
        np.add.accumulate(_lane_reduce(d3, g3), axis=0, dtype=_F64)[-1],
    )


def _lane_reduce(a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """Each plane (last axis) of ``a`` (times ``b``) reduced as ``vec::reduce_all`` (or
    ``map2_reduce_all`` with the product) reduces it with 8-lane float32 vectors."""
    m = a.shape[-1]
    term = (lambda j, k: a[..., j:k]) if b is None else (lambda j, k: a[..., j:k] * b[..., j:k])
    if m < _LANES:  # a partial vector: its lanes added in order
        acc = term(0, 1)[..., 0]
        for j in range(1, m):
            acc = acc + term(j, j + 1)[..., 0]
        return acc
    body = m - m % _LANES
    acc = term(0, _LANES).copy()
    for j in range(_LANES, body, _LANES):
        acc += term(j, j + _LANES)
    if body < m:  # the last partial vector: a product fused into its lane
        r = m - body
        acc[..., :r] = (
            acc[..., :r] + a[..., body:] if b is None else _fma(a[..., body:], b[..., body:], acc[..., :r])
        )
    half = _LANES // 2
    while half:
        acc = acc[..., :half] + acc[..., half : 2 * half]
        half //= 2
    return acc[..., 0]


def _row_sums(rows_x, rows_g, mean, chunk: int, sums: np.ndarray, dotps: np.ndarray) -> None:
    """NumPy form of the rows' ``(sum, dotp)`` into the float32 ``sums``, ``dotps``."""
    total_s, total_d = np.zeros(sums.size, _F64), np.zeros(sums.size, _F64)
    for start in range(0, rows_x.shape[0], chunk):
        total_s += np.add.accumulate(rows_g[start : start + chunk], axis=0)[-1]
        acc = np.zeros(sums.size, _F32)
        for row, g in zip(rows_x[start : start + chunk], rows_g[start : start + chunk]):
            acc = _fma(row - mean, g, acc)
        total_d += acc
    sums[:], dotps[:] = total_s, total_d


def _input_grad(x3, g3, mean, k, grad_mean, invstd, w, fused: int) -> np.ndarray:
    """NumPy form of the training-mode input gradient (the product fused in the channels
    before ``fused``)."""
    per = lambda v: v[:, None]  # noqa: E731
    d = x3 - per(mean)
    centred = g3 - per(grad_mean)
    inner = elementwise(_fma, -d, per(k), centred)
    if fused < x3.shape[1]:
        inner[:, fused:] = centred[:, fused:] - d[:, fused:] * per(k[fused:])
    return inner * per(invstd) * per(w)


def _load_loops() -> object:
    from . import torch_batch_norm_loops

    return torch_batch_norm_loops
