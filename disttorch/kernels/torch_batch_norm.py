"""Float32 batch norm's statistics and affine map, rounding for rounding as PyTorch's CPU
kernels for a contiguous ``(N, C, *)`` input compute them (``batch_norm_kernel.cpp``,
``Normalization.cpp``):

- with a spatial size ``M > 1``, each channel's sum in float64, its elements in memory order;
  ``mean = float32(sum / count)``; ``var_sum`` the float64 sum of the float32 squares
  ``(x - mean)**2``, rounded to float32. Without one (``(N, C)``), the channels side by side
  in float32 vectors: each thread's rows added in order into its own sums (``var_sum`` by
  fused multiply-adds ``d * d + sum``), the threads' sums in order in float64,
  ``mean = float32(sum / N)``.
- ``invstd = float32(1 / sqrt(float64(var_sum / count) + eps))``; the running mean
  ``momentum * mean + (1 - momentum) * running`` in float32, the running variance with the
  unbiased ``var_sum / (count - 1)`` added in float64.
- ``alpha = invstd * weight``, ``beta = bias - mean * alpha`` (fused), the output
  ``x * alpha + beta`` (fused): the compiler fuses them in PyTorch's vectorised loop.

A fused multiply-add ``a * b + c`` of float32 values is the float64 product (exact) plus
``c``, rounded to float64 and then to float32 (the second rounding can differ from one
rounding only for a sum within 2**-29 of a float32 tie). NumPy's einsum sums the channels
pairwise: its means and variances were an ulp off in most channels, and so was every output.
With numba the loops are compiled (``kernels/torch_batch_norm_loops.py``, the processor's
fused multiply-add): the same numbers in one pass each.
"""

from __future__ import annotations

import numpy as np

from .jit import compiled
from .threads import elementwise, get_num_threads, parallel_over

__all__ = ["affine", "fused_affine", "running_update", "train_stats"]

_F32, _F64 = np.float32, np.float64


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


def _load_loops() -> object:
    from . import torch_batch_norm_loops

    return torch_batch_norm_loops
