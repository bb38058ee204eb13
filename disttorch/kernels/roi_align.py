"""RoI Align (Mask R-CNN, arXiv:1703.06870) as torchvision's CPU kernel samples it, written as
two small matrix products per region.

A region's output bin ``(ph, pw)`` averages ``gh x gw`` bilinear samples at regular points
of the bin (``g`` is ``sampling_ratio``, or ``ceil(region size / output size)``). A bilinear
sample is separable: a weight over rows times a weight over columns, each zero when the
point lies outside ``[-1, size]``, clamped to the border otherwise. So the region's output is
``Wy @ x @ Wx.T`` for one image ``x`` ``[C, H, W]``, ``Wy`` ``[oh, H]`` holding each output
row's averaged row weights (``Wx`` likewise), and the gradient of the image is
``Wy.T @ g @ Wx``. Coordinates are computed in the input's dtype, in the kernel's order."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["roi_align_backward", "roi_align_forward"]


def _axis_weights(start, bin_size, grid: int, pooled: int, size: int, dtype: np.dtype) -> np.ndarray:
    """``[pooled, size]``: each output position's sample weights along one axis, averaged over
    its ``grid`` samples."""
    weights = np.zeros((pooled, size), dtype)
    if grid == 0:
        return weights
    p = np.arange(pooled, dtype=dtype)[:, None]
    i = np.arange(grid, dtype=dtype)[None, :]
    coord = start + p * bin_size + (i + dtype.type(0.5)) * bin_size / dtype.type(grid)
    valid = ((coord >= -1.0) & (coord <= size)).astype(dtype)
    coord = np.maximum(coord, 0)
    low = coord.astype(np.int64)
    edge = low >= size - 1
    low = np.where(edge, size - 1, low)
    high = np.where(edge, size - 1, low + 1)
    frac = np.where(edge, 0, coord - low).astype(dtype)
    rows = np.broadcast_to(np.arange(pooled)[:, None], coord.shape)
    np.add.at(weights, (rows, low), (1 - frac) * valid)
    np.add.at(weights, (rows, high), frac * valid)
    return weights / dtype.type(grid)


def _region_weights(roi, spatial_scale, out_h, out_w, sampling_ratio, aligned, height, width, dtype):
    """``(Wy, Wx)`` of one region ``(batch, x1, y1, x2, y2)``."""
    t = dtype.type
    offset = t(0.5) if aligned else t(0.0)
    x1, y1, x2, y2 = (t(v) * t(spatial_scale) - offset for v in roi[1:5])
    roi_w, roi_h = x2 - x1, y2 - y1
    if not aligned:  # a region is at least one pixel, so it never collapses
        roi_w, roi_h = max(roi_w, t(1.0)), max(roi_h, t(1.0))
    bin_h, bin_w = roi_h / t(out_h), roi_w / t(out_w)
    grid_h = sampling_ratio if sampling_ratio > 0 else math.ceil(roi_h / t(out_h))
    grid_w = sampling_ratio if sampling_ratio > 0 else math.ceil(roi_w / t(out_w))
    return (
        _axis_weights(y1, bin_h, int(grid_h), out_h, height, dtype),
        _axis_weights(x1, bin_w, int(grid_w), out_w, width, dtype),
    )


def roi_align_forward(
    x: np.ndarray,
    rois: np.ndarray,
    spatial_scale: float,
    out_h: int,
    out_w: int,
    sampling_ratio: int,
    aligned: bool,
) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """The pooled regions ``[K, C, out_h, out_w]`` of ``x`` ``[N, C, H, W]`` for ``rois``
    ``[K, 5]``, and each region's ``(Wy, Wx)`` for the backward pass."""
    n, c, height, width = x.shape
    out = np.zeros((len(rois), c, out_h, out_w), x.dtype)
    weights = []
    for k, roi in enumerate(rois):
        wy, wx = _region_weights(
            roi, spatial_scale, out_h, out_w, sampling_ratio, aligned, height, width, x.dtype
        )
        out[k] = wy @ x[int(roi[0])] @ wx.T
        weights.append((wy, wx))
    return out, weights


def roi_align_backward(
    g: np.ndarray, rois: np.ndarray, weights: list[tuple[np.ndarray, np.ndarray]], shape: tuple[int, ...]
) -> np.ndarray:
    """The gradient ``[N, C, H, W]`` of the input from the output's gradient ``g``."""
    grad = np.zeros(shape, g.dtype)
    for k, (wy, wx) in enumerate(weights):
        grad[int(rois[k, 0])] += wy.T @ g[k] @ wx
    return grad
