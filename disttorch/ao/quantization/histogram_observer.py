"""``HistogramObserver``: keeps a histogram of everything it saw (``bins`` equal bins over the
running range; when the range grows, the old histogram is spread over the new bins at 16x
finer resolution), and chooses the range to quantize by a greedy search that trims the
histogram's tails while the L2 quantization error keeps falling (PyTorch's
``_non_linear_param_search``). The default activation observer of PyTorch's x86/fbgemm
qconfigs.

All arithmetic follows PyTorch's dtypes step by step (float32 tensors, Python floats where
PyTorch uses ``.item()``; cumulative sums accumulated in double as its CPU kernel does), so
the chosen qparams equal PyTorch's.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ... import _dtype
from ..._creation import tensor
from ..._linspace import linspace_values
from ..._tensor import Tensor
from . import observer
from .observer import _EPS, _UniformObserver

__all__ = ["HistogramObserver"]

_F32 = np.float32


def histc(x: np.ndarray, bins: int, lo: np.float32, hi: np.float32) -> np.ndarray:
    """``torch.histc`` as PyTorch's CPU kernel bins: ``int((x - lo) * bins / (hi - lo))`` in
    float32, the right edge in the last bin, values outside ``[lo, hi]`` dropped."""
    if lo == hi:
        lo, hi = _F32(lo - 1), _F32(hi + 1)
    inside = x[(x >= lo) & (x <= hi)]
    pos = ((inside - lo) * _F32(bins) / _F32(hi - lo)).astype(np.int64)
    pos[pos >= bins] = bins - 1
    return np.bincount(pos, minlength=bins).astype(_F32)


def _norm(delta_begin: Any, delta_end: Any, density: np.ndarray) -> np.ndarray:
    """``density * (end**3 - begin**3) / 3``: the L2 error of values spread evenly over
    ``[begin, end]`` around a quantized level."""
    return density * ((delta_end * delta_end * delta_end - delta_begin * delta_begin * delta_begin) / _F32(3))


class HistogramObserver(_UniformObserver):
    """See the module header. ``bins``: the histogram's resolution (2048)."""

    def __init__(
        self,
        bins: int = 2048,
        dtype: Any = None,
        qscheme: Any = None,
        reduce_range: bool = False,
        quant_min: int | None = None,
        quant_max: int | None = None,
        factory_kwargs: Any = None,
        eps: float = _EPS,
        is_dynamic: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, factory_kwargs, eps, is_dynamic)
        self.bins = bins
        self.register_buffer("histogram", tensor(np.zeros(bins, _F32)))
        self.register_buffer("min_val", tensor(float("inf")))
        self.register_buffer("max_val", tensor(float("-inf")))
        self.dst_nbins = 2 ** (8 * self.dtype.itemsize)
        self.upsample_rate = 16

    # ------------------------------------------------------------------ observing
    def forward(self, x_orig: Tensor) -> Tensor:
        """Add ``x_orig``'s values to the histogram (infinities ignored); return it."""
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(_dtype.float32).numpy().reshape(-1)
        if np.isinf(x).any():
            warnings.warn("torch.inf detected in input tensor, ignoring input", stacklevel=2)
            x = x[~np.isinf(x)]
            if x.size == 0:
                return x_orig
        x_min, x_max = x.min(), x.max()
        cur_min, cur_max = _F32(self.min_val.item()), _F32(self.max_val.item())
        hist = self.histogram.numpy()
        if cur_min == np.inf or cur_max == -np.inf:
            new_min, new_max, hist = x_min, x_max, histc(x, self.bins, x_min, x_max)
        else:
            new_min, new_max = min(cur_min, x_min), max(cur_max, x_max)
            update = histc(x, self.bins, new_min, new_max)
            if new_min == cur_min and new_max == cur_max:
                hist = hist + update
            else:
                hist = update + self._rebinned(hist, cur_min, cur_max, new_min, new_max)
        self.histogram = tensor(np.asarray(hist, _F32))
        self.min_val = tensor(_F32(new_min))
        self.max_val = tensor(_F32(new_max))
        return x_orig

    def _rebinned(
        self, hist: np.ndarray, lo: np.float32, hi: np.float32, new_lo: np.float32, new_hi: np.float32
    ):
        """The histogram over ``[lo, hi]`` spread over ``bins`` bins of ``[new_lo, new_hi]``."""
        if lo == hi:  # one value seen so far: all its count goes to its new bin
            return histc(np.array([lo], _F32), self.bins, new_lo, new_hi) * _F32(hist.sum(dtype=np.float64))
        rate = self.upsample_rate
        fine = np.repeat(hist, rate) / _F32(rate)
        fine_width = _F32(hi - lo) / _F32(self.bins * rate)
        mids = (
            linspace_values(float(lo), float(hi), self.bins * rate + 1, np.dtype(_F32))[:-1]
            + _F32(0.5) * fine_width
        )
        edges = linspace_values(float(new_lo), float(new_hi), self.bins + 1, np.dtype(_F32))
        bucket = np.clip(np.searchsorted(edges, mids, side="right") - 1, 0, self.bins - 1)
        out = np.zeros(self.bins, _F32)
        np.add.at(out, bucket, fine)  # in order, in float32, as PyTorch's bincount
        return out

    # ------------------------------------------------------------------ choosing the range
    def _quantization_error(self, start_bin: int, end_bin: int) -> float:
        """The L2 error of quantizing the histogram with ``[start_bin, end_bin]`` as range."""
        bin_width = (self.max_val.item() - self.min_val.item()) / self.bins
        dst_width = bin_width * (end_bin - start_bin + 1) / self.dst_nbins
        if dst_width == 0.0:
            return 0.0
        bw, dw = _F32(bin_width), _F32(dst_width)
        begin = (np.arange(self.bins) - start_bin).astype(_F32) * bw
        end = begin + bw
        top = self.dst_nbins - 1
        dst_begin = np.clip(np.floor_divide(begin, dw), 0, top).astype(_F32)
        dst_end = np.clip(np.floor_divide(end, dw), 0, top).astype(_F32)
        density = self.histogram.numpy() / bw
        half = _F32(dst_width / 2)
        norm = np.zeros(self.bins, _F32)
        norm += _norm(begin - (dst_begin + _F32(0.5)) * dw, np.ones(self.bins, _F32) * half, density)
        norm += (dst_end - dst_begin - _F32(1)) * _norm(_F32(-dst_width / 2), half, density)
        norm += _norm(_F32(-dst_width / 2), end - (dst_end * dw + half), density)
        return float(_F32(norm.sum(dtype=np.float64)))

    def _non_linear_param_search(self) -> tuple:
        """Trim the histogram's tails, one 1e-5 quantile step at a time on the heavier side,
        while the quantization error falls; the kept bins' range."""
        hist = self.histogram.numpy()
        total = float(_F32(hist.sum(dtype=np.float64)))
        csum = np.cumsum(hist, dtype=np.float64).astype(_F32)
        alpha, beta, stepsize = 0.0, 1.0, 1e-5
        start_bin, end_bin = 0, self.bins - 1
        norm_min = float("inf")
        while alpha < beta:
            next_alpha, next_beta = alpha + stepsize, beta - stepsize
            left, right = start_bin, end_bin
            while left < end_bin and csum[left] < _F32(next_alpha * total):
                left += 1
            while right > start_bin and csum[right] > _F32(next_beta * total):
                right -= 1
            next_start, next_end = start_bin, end_bin
            if (left - start_bin) > (end_bin - right):
                next_start, alpha = left, next_alpha
            else:
                next_end, beta = right, next_beta
            if next_start == start_bin and next_end == end_bin:
                continue
            norm = self._quantization_error(next_start, next_end)
            if norm > norm_min:
                break
            norm_min, start_bin, end_bin = norm, next_start, next_end
        lo, hi = _F32(self.min_val.item()), _F32(self.max_val.item())
        bin_width = _F32(hi - lo) / _F32(self.bins)
        return tensor(lo + bin_width * _F32(start_bin)), tensor(lo + bin_width * _F32(end_bin + 1))

    def calculate_qparams(self) -> tuple:
        """``(scale, zero_point)`` of the searched range."""
        if self.min_val.item() == float("inf") and self.max_val.item() == float("-inf"):
            warnings.warn(
                "must run observer before calling calculate_qparams. Returning default scale and zero point ",
                stacklevel=2,
            )
            return tensor([1.0]), tensor([0])
        return self._calculate_qparams(*self._non_linear_param_search())

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


# PyTorch defines it in torch.ao.quantization.observer: found (and named) there too
observer.HistogramObserver = HistogramObserver
